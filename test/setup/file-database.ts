import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, dropTestDatabase, newTestDatabaseUrl } from '../helpers/database';

// Runs before each test file (vitest setupFiles): the file's own database, named now so configs built while the
// file's tests are collected can use it, made before the file's own hooks and dropped after its last test.
const url = newTestDatabaseUrl();
process.env.PW_FILE_DATABASE_URL = url;

beforeAll(async () => {
  await createTestDatabase(url);
});

afterAll(async () => {
  await dropTestDatabase(url);
});
