import Type, { type TSchema } from 'typebox';
import { ERRORS } from '../core/errors';
import { API_VERSION_NAMES, LATEST_API_VERSION } from '../core/versions';

/** TypeBox schemas every route file shares: the error body, lists and pagination. One copy each. */

/** The wire shape of every error, for route schemas and the OpenAPI document. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.String(),
        code: Type.String({ description: `One of: ${Object.keys(ERRORS).join(', ')}.` }),
        message: Type.String(),
        scope: Type.Optional(Type.String({ description: 'The missing scope, on insufficient_scope.' })),
        param: Type.Optional(Type.String({ description: 'The offending parameter, on validation errors.' })),
      },
      { additionalProperties: true },
    ),
    // Declared, or the serializer would drop it from every error made with a key.
    livemode: Type.Optional(Type.Boolean({ description: 'Present once the key was recognised.' })),
  },
  { description: 'Every error: a stable code, its type and a message.' },
);

/** Every route's 4xx and 5xx answers. */
export const errorResponses = { '4xx': ErrorResponse, '5xx': ErrorResponse };

export const MAX_PAGE_SIZE = 100;

/** `limit` of a paged list. */
export function Limit(defaultLimit: number, description = `Page size, 1 to ${MAX_PAGE_SIZE}.`) {
  return Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: defaultLimit, description });
}

/** The last second of the year 9999: a timestamp every store and clock of ours can hold (Postgres's int8 cannot hold 2^63). */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** A point in time in Unix seconds, from 1970 to the end of 9999. */
export function UnixSeconds(description: string) {
  return Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description });
}

/** A page of a list (Stripe's shape); every response made with a test key carries livemode false. */
export function listOf<T extends TSchema, U extends TSchema>(item: T, url: U) {
  return Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    has_more: Type.Boolean(),
    url,
    livemode: Type.Boolean(),
  });
}

/** The `Service-Version` request header: the API version a response renders events in; absent, the newest. */
export const ServiceVersionHeaders = Type.Object({
  'service-version': Type.Optional(
    Type.String({
      description: `The API version to render events in: ${API_VERSION_NAMES.join(', ')}. Absent: the newest, ${LATEST_API_VERSION}.`,
    }),
  ),
});
