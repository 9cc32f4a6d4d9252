import { afterAll, describe, expect, inject, it } from 'vitest';
import { testDatabaseUrl } from '../../helpers/database';
import { uniqueTaskQueue } from '../../helpers/env';
import { scrape } from '../../helpers/prometheus';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process';

/**
 * Several workers on one host with the default metrics settings: each starts, polls and serves its own page
 * (the first free port from 9464 on), with the Temporal SDK's metrics on it; none dies of a port another holds.
 */
describe('three workers on one host, default metrics settings', () => {
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
  });

  it('all start, poll and serve metrics, each on its own port', { timeout: 240_000 }, async () => {
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('metrics-ports'),
      // Unset, as an operator who never chose a port leaves it.
      METRICS_PORT: '',
    };
    // One after another: the second and third find the default port taken by the first.
    for (let i = 0; i < 3; i += 1) workers.push(await startWorkerProcess(env, 90_000));
    const urls = workers.map((worker) => {
      const output = worker.output.join('');
      expect(output).not.toMatch(/Temporal SDK metrics off|serves no metrics/);
      const url = /worker: metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(output)?.[1];
      expect(url, output).toBeDefined();
      return url as string;
    });
    expect(new Set(urls).size).toBe(3);
    for (const url of urls) {
      const port = Number(new URL(url).port);
      expect(port).toBeGreaterThanOrEqual(9464);
      expect(port).toBeLessThanOrEqual(9473);
    }
    for (const [index, url] of urls.entries()) {
      const samples = await scrape(url);
      expect(
        samples.some((s) => s.name.startsWith('parcel_webhooks_')),
        url,
      ).toBe(true);
      // The SDK's own page, appended: this worker's pollers are running.
      expect(
        samples.some((s) => s.name.startsWith('temporal_')),
        url,
      ).toBe(true);
      expect(workers[index]?.alive()).toBe(true);
    }
  });
});
