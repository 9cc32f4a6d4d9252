import type { FastifyInstance } from 'fastify';
import { AUDIT_ACTIONS, isAuditAction, listAuditLog } from '../../domain/audit-log';
import { pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { sendPage } from '../security-headers';
import { auditLogPage } from '../views/audit-log';
import { scopeOf } from './endpoints';

/** The audit log of the signed-in account in one mode (domain/audit-log.ts). */

type AuditLogRequest = { Params: { mode: string }; Querystring: { action?: string; starting_after?: string } };
const ENTRIES_PER_PAGE = 25;

export default async function auditLogRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  app.get<AuditLogRequest>(
    '/dashboard/:mode/audit-log',
    { schema: { hide: true }, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = pageContext(request, options.assets, parseModeParam(request.params.mode));
      // The select offers only known actions; anything else is no filter.
      const action = request.query.action && isAuditAction(request.query.action) ? request.query.action : undefined;
      const startingAfter = request.query.starting_after || undefined;
      const entries = await listAuditLog(options.deps().pool, scopeOf(ctx), {
        limit: ENTRIES_PER_PAGE,
        action,
        startingAfter,
      });
      return sendPage(reply, auditLogPage(ctx, { entries, actions: AUDIT_ACTIONS, action, startingAfter }));
    },
  );
}
