import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { eraseParcel } from '../../domain/parcel-erasure';
import { errorResponses } from '../schemas';
import { checkToken } from './internal-events';

/** Erasure of a parcel's personal values for the parcel system, behind the same internal token as publishing. */

const Params = Type.Object({
  parcel_id: Type.String({ minLength: 1, maxLength: 200, description: 'data.parcel.id of its events.' }),
});

const Body = Type.Object(
  {
    account_id: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The account whose events of the parcel are erased (acct_...).',
    }),
  },
  { additionalProperties: false },
);

const ParcelErasure = Type.Object({
  object: Type.Literal('parcel_erasure'),
  parcel_id: Type.String(),
  events_erased: Type.Integer({
    description:
      "The parcel's events of the account, both modes: none holds a personal value any more. The same on a repeated call.",
  }),
});

export default async function internalParcelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/internal/v1/parcels/:parcel_id/erase',
    {
      config: { internal: true },
      onRequest: async (request) => checkToken(request, app.config.internalApiToken, app.internalTokenFailures),
      schema: {
        tags: ['internal'],
        summary: "Erase a parcel's personal values (parcel system only)",
        description:
          'Replaces the fields the event schemas mark personal (recipient_name, description) with "[erased]" in every ' +
          'stored event of the parcel for the account, test and live mode, and removes them from the stored answers of ' +
          'their attempts, in one transaction; an answer recorded for those events afterwards is stored without its body. ' +
          'A pending delivery posts the erased body. Repeating the call is harmless. ' +
          "Receivers' own copies are theirs to erase.",
        params: Params,
        body: Body,
        response: { 200: ParcelErasure, ...errorResponses },
      },
    },
    async (request) => eraseParcel(app.pg, { accountId: request.body.account_id, parcelId: request.params.parcel_id }),
  );
}
