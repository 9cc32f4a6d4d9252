import type { Command } from 'commander';
import type { CliContext } from '../context';

export function registerStart(program: Command, ctx: CliContext): void {
  // The worker, its bundler and the API load only when `start` runs, so every other command starts fast.
  program
    .command('start')
    .description(
      'Run the whole service locally: migrate, Temporal dev server (unless TEMPORAL_ADDRESS), worker and API',
    )
    .option('--json', 'accepted for uniformity; start prints text lines')
    .action(async () => {
      // require, not import(): under tsx's CommonJS hook a dynamic import() bypasses the TypeScript loader.
      const { startAll } = require('./start-all') as typeof import('./start-all');
      await startAll(ctx.config);
    });
}
