import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AssetUrls } from './views/models';
import { ASSETS } from './views/paths';

/**
 * The page's three static files, read once at start. Each is served under a name carrying a hash of its
 * bytes (app-1a2b3c4d.css), so browsers may cache it for a year and a new release is fetched at once.
 * Nothing is built or downloaded: the files in dashboard/assets are what the browser gets.
 */
export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const SOURCES = {
  css: { file: 'app.css', contentType: 'text/css; charset=utf-8' },
  js: { file: 'app.js', contentType: 'text/javascript; charset=utf-8' },
  icon: { file: 'icon.svg', contentType: 'image/svg+xml' },
} as const;

export interface AssetTable {
  urls: AssetUrls;
  /** By public file name (app-1a2b3c4d.css). */
  byName: Map<string, Asset>;
}

export function loadAssets(dir: string = path.join(__dirname, 'assets')): AssetTable {
  const byName = new Map<string, Asset>();
  const urls = {} as Record<keyof typeof SOURCES, string>;
  for (const [role, source] of Object.entries(SOURCES) as [
    keyof typeof SOURCES,
    (typeof SOURCES)[keyof typeof SOURCES],
  ][]) {
    const body = readFileSync(path.join(dir, source.file));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
    const ext = path.extname(source.file);
    const name = `${path.basename(source.file, ext)}-${hash}${ext}`;
    byName.set(name, { body, contentType: source.contentType, etag: `"${hash}"` });
    urls[role] = `${ASSETS}/${name}`;
  }
  return { urls, byName };
}
