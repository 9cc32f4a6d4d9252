export interface ChaosOptions {
  seed: number;
  events: number;
  /** Write the full result as JSON here. */
  out: string | undefined;
  /** The full Temporal server on Postgres (temporal-tools/temporal-server.ts) instead of the dev server. */
  cluster: boolean;
  /** Worker processes sharing the task queue and the outbox; more than one switches the kills to a schedule. */
  workers: number;
}

/** Past this, 2 cores spend the run starting workers again rather than delivering. */
export const MAX_WORKERS = 8;

export const USAGE = `npm run chaos -- [--seed N] [--events N] [--out FILE] [--cluster] [--workers N]

  --seed N     repeat a run: every random choice (traffic, receivers' answers, fault times) comes from it
               (default: drawn from the clock and printed)
  --events N   events to publish (default 300)
  --out FILE   also write the full result as JSON to FILE
  --cluster    run on the full Temporal server on PostgreSQL (built once, its own databases) instead of the
               dev server; the Temporal outage stops and starts that server
  --workers N  N worker processes on one task queue, sharing the outbox (default 1, at most ${MAX_WORKERS}); with
               more than one, a worker is SIGKILLed every 10 s under load (round robin from a seeded start)
               and restarted, and the Temporal and Postgres outages stay`;

function positiveInteger(flag: string, raw: string | undefined, min: number): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min) {
    throw new Error(`${flag} needs a whole number >= ${min}, got ${raw ?? 'nothing'}`);
  }
  return Number(raw);
}

export function parseArgs(argv: string[]): ChaosOptions | 'help' {
  const options: ChaosOptions = {
    seed: Date.now() % 1_000_000,
    events: 300,
    out: undefined,
    cluster: false,
    workers: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] as string).split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--seed':
        options.seed = positiveInteger(flag, value(), 0);
        break;
      case '--events':
        options.events = positiveInteger(flag, value(), 1);
        break;
      case '--out': {
        const file = value();
        if (!file) throw new Error('--out needs a file name');
        options.out = file;
        break;
      }
      case '--cluster':
        options.cluster = true;
        break;
      case '--workers': {
        const raw = value();
        options.workers = positiveInteger(flag, raw, 1);
        if (options.workers > MAX_WORKERS) throw new Error(`--workers is at most ${MAX_WORKERS}, got ${raw}`);
        break;
      }
      case '--help':
      case '-h':
        return 'help';
      default:
        throw new Error(`unknown argument ${flag}\n\n${USAGE}`);
    }
  }
  return options;
}
