import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * JSON only: Fastify also parses text/plain by default, which would let a non-JSON body reach a handler as a
 * string and fail as a confusing validation error. Without that parser it is a clear 415.
 *
 * An empty body sent with `Content-Type: application/json` is read as no body: many HTTP clients set that
 * header on every request, and a DELETE or a rotation (whose body is optional) must not fail as invalid JSON
 * for it. Everything else goes through Fastify's own parser, keeping its __proto__ and constructor refusals.
 */
async function jsonOnly(app: FastifyInstance): Promise<void> {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}

export default fp(jsonOnly, { name: 'json-only' });
