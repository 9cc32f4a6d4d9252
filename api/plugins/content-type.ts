import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * JSON only: Fastify also parses text/plain by default, which would let a non-JSON body reach a handler as a
 * string and fail as a confusing validation error. Without that parser it is a clear 415.
 */
async function jsonOnly(app: FastifyInstance): Promise<void> {
  app.removeContentTypeParser('text/plain');
}

export default fp(jsonOnly, { name: 'json-only' });
