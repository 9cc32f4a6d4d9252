import type { FastifyInstance } from 'fastify';

// Filled in by its issue; registered from app.ts so the wiring is in place.
export default async function routes(_app: FastifyInstance): Promise<void> {}
