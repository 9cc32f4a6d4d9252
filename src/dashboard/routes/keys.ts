import type { FastifyInstance } from 'fastify';
import { ALL_SCOPES, SCOPES, parseScopes } from '../../core/scopes';
import {
  createApiKeyAsMerchant,
  listApiKeys,
  parseExpiry,
  revokeApiKey,
  type ApiKeyRecord,
} from '../../domain/api-keys';
import { errorStatus, formError, list, optional, text, type FormBody } from '../forms';
import { actorOf, notice, pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { sendPage } from '../security-headers';
import { confirmPage } from '../views/confirm';
import { keyLabel, keysPage, type KeyFormValues } from '../views/keys';
import type { KeyView, Mode } from '../views/models';
import { paths } from '../views/paths';

/** API keys of the signed-in account, one mode at a time: create, list, revoke (domain/api-keys.ts). */

const SCOPE_OPTIONS = ALL_SCOPES.map((name) => ({ name, description: SCOPES[name] }));

function toView(key: ApiKeyRecord): KeyView {
  return { ...key, mode: key.mode };
}

type ModeParams = { Params: { mode: string } };
type KeyParams = { Params: { mode: string; id: string } };

export default async function keyRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const hide = { hide: true };
  const pool = () => options.deps().pool;
  const keysOf = async (accountId: string, mode: Mode) =>
    (await listApiKeys(pool(), accountId)).filter((key) => key.mode === mode).map(toView);

  app.get<ModeParams>(
    '/dashboard/:mode/keys',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const mode = parseModeParam(request.params.mode);
      const ctx = pageContext(request, options.assets, mode, { notice: notice(request.query) });
      return sendPage(reply, keysPage(ctx, { keys: await keysOf(ctx.account.id, mode), scopes: SCOPE_OPTIONS }));
    },
  );

  app.post<ModeParams>(
    '/dashboard/:mode/keys',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const mode = parseModeParam(request.params.mode);
      const body = request.body as FormBody;
      const ctx = pageContext(request, options.assets, mode, { canonical: paths.keys(mode) });
      const form: KeyFormValues = {
        scopes: list(body, 'scopes'),
        description: text(body, 'description'),
        expires: text(body, 'expires'),
      };
      try {
        const expires = optional(body, 'expires');
        const created = await createApiKeyAsMerchant(
          pool(),
          {
            accountId: ctx.account.id,
            mode,
            scopes: parseScopes(form.scopes.join(',')),
            expiresAt: expires === undefined ? undefined : parseExpiry(expires),
            description: optional(body, 'description'),
          },
          actorOf(request),
        );
        const keys = await keysOf(ctx.account.id, mode);
        return sendPage(
          reply,
          keysPage(ctx, { keys, scopes: SCOPE_OPTIONS, created: { key: created.key, record: toView(created) } }),
        );
      } catch (err) {
        const error = formError(err);
        const keys = await keysOf(ctx.account.id, mode);
        return sendPage(reply, keysPage(ctx, { keys, scopes: SCOPE_OPTIONS, error, form }), errorStatus(err));
      }
    },
  );

  app.post<KeyParams>(
    '/dashboard/:mode/keys/:id/revoke',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const mode = parseModeParam(request.params.mode);
      const ctx = pageContext(request, options.assets, mode);
      const keyId = request.params.id;
      if (text(request.body as FormBody, 'confirm') !== 'yes') {
        const key = (await keysOf(ctx.account.id, mode)).find((candidate) => candidate.id === keyId);
        const name = key ? `the key ending ${key.last4}` : 'this key';
        return sendPage(
          reply,
          confirmPage(ctx, {
            section: 'keys',
            question: `Revoke ${name}?`,
            consequence: `Every request made with ${key ? keyLabel(key) : 'it'} fails at once with revoked_api_key. This cannot be undone.`,
            action: paths.revokeKey(mode, keyId),
            confirmLabel: 'Revoke',
            cancelHref: paths.keys(mode),
            danger: true,
          }),
        );
      }
      await revokeApiKey(pool(), { accountId: ctx.account.id, livemode: mode === 'live' }, keyId, actorOf(request));
      return reply.redirect(`${paths.keys(mode)}?notice=key_revoked`, 303);
    },
  );
}
