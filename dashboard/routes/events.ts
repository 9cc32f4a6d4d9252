import type { FastifyInstance } from 'fastify';
import type { DashboardRouteOptions } from '../plugin';

/**
 * Events (list, one event with every attempt, resend): wired once the domain offers listing, reading and
 * resending events (issue 12); until then the section is left out of the navigation (FEATURES.events).
 */
export default async function eventRoutes(_app: FastifyInstance, _options: DashboardRouteOptions): Promise<void> {}
