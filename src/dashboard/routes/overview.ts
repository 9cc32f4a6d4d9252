import type { FastifyInstance } from 'fastify';
import { endpointsLastDay } from '../../domain/delivery-stats';
import { listEndpoints, MAX_ENDPOINTS_PER_MODE } from '../../domain/endpoints';
import { notice, pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { sendPage } from '../security-headers';
import { overviewPage } from '../views/overview';
import { scopeOf } from './endpoints';

/** The home page of a mode (/dashboard/test, /dashboard/live; any other name is an unknown page, 404): every endpoint's last day. */
export default async function overviewRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  app.get<{ Params: { mode: string } }>(
    '/dashboard/:mode(^(?:test|live)$)',
    { schema: { hide: true }, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = pageContext(request, options.assets, parseModeParam(request.params.mode), {
        notice: notice(request.query),
      });
      const { pool } = options.deps();
      const endpoints = (await listEndpoints(options.deps(), scopeOf(ctx), { limit: MAX_ENDPOINTS_PER_MODE })).data;
      const days = await endpointsLastDay(
        pool,
        endpoints.map((endpoint) => endpoint.id),
        ctx.now,
      );
      return sendPage(
        reply,
        overviewPage(ctx, {
          endpoints: endpoints.map((endpoint, index) => ({ endpoint, ...(days[index] as (typeof days)[number]) })),
        }),
      );
    },
  );
}
