import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file's own database, so one file's outbox dispatcher never sees another's events.
    setupFiles: ['test/setup/file-database.ts'],
    // Two cores run the dev server, Postgres and the workers: two test files at a time is what fits.
    maxWorkers: 2,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
