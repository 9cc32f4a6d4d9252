/**
 * The retention job in a process of its own, for the large-tables scenario: in production it runs in a worker,
 * not in the API process whose publishes it must not stall, so the bench keeps the two apart too (a pause of one
 * process then shows as what it is). Forked by bench/scenarios/large-tables.ts with an IPC channel; reads
 * BENCH_RETENTION (JSON: databaseUrl, temporalAddress, cutoffMs, limit), runs purgeExpired to the end and sends
 * its result back.
 */
import { Client, Connection } from '@temporalio/client';
import { createPool } from '../src/db/pool';
import { purgeExpired } from '../src/domain/retention';

async function main(): Promise<void> {
  const { databaseUrl, temporalAddress, cutoffMs, limit } = JSON.parse(process.env.BENCH_RETENTION ?? '{}') as {
    databaseUrl: string;
    temporalAddress: string;
    cutoffMs: number;
    limit: number;
  };
  const pool = createPool(databaseUrl, 4);
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const result = await purgeExpired(
      { pool, temporal: new Client({ connection, namespace: 'default' }) },
      { cutoff: new Date(cutoffMs), limit, budgetMs: Number.POSITIVE_INFINITY },
    );
    const send = process.send?.bind(process);
    if (!send)
      throw new Error('bench/retention-child.ts runs forked by the large-tables scenario, with an IPC channel');
    await new Promise<void>((resolve, reject) =>
      send(result, undefined, undefined, (err: Error | null) => (err ? reject(err) : resolve())),
    );
  } finally {
    await connection.close();
    await pool.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`retention: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
