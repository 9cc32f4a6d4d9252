import path from 'node:path';

/** Test fixtures (TLS pair and CA, signature vectors, histories). No vitest import: usable by test/chaos too. */
export const FIXTURES = path.join(__dirname, '..', 'fixtures');
