import type { FastifyInstance } from 'fastify';
import type { AssetTable } from '../assets';
import { ASSETS } from '../views/paths';

/**
 * The stylesheet, the script and the icon, by hashed name: cached for a year, since a changed file gets a
 * new name. An unknown or stale name is a 404.
 */
export default async function assetRoutes(app: FastifyInstance, options: { assets: AssetTable }): Promise<void> {
  app.get<{ Params: { name: string } }>(`${ASSETS}/:name`, { schema: { hide: true } }, async (request, reply) => {
    const asset = options.assets.byName.get(request.params.name);
    if (!asset) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
    reply
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('ETag', asset.etag)
      .type(asset.contentType);
    if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.send(asset.body);
  });
}
