import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../../src/api/server';
import { testConfig } from '../../helpers/env';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';

/** `npm start` on a terminal: readable lines, with keys redacted exactly as in the JSON lines. */
describe('readable logs on a terminal', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  let f: ApiFixture;
  beforeAll(async () => {
    const config = testConfig({ LOG_LEVEL: 'info' });
    f = await apiFixture({ config, logger: loggerOptions(config, { pretty: true, destination: sink }) });
  });
  afterAll(async () => {
    await f?.close();
  });

  // A key pasted into the query: refused (400 parameter_unknown), and still redacted from every line.
  it('prints one readable line per record, no JSON record, and never a key', async () => {
    const { key } = await f.key();
    await f.app.inject({ url: `/v1/towns?api_key=${key}`, headers: bearer(key) });
    const log = lines.join('\n');
    expect(
      lines.some((line) =>
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: incoming request GET \/v1\/towns\?api_key=svc_test_\[redacted\]/.test(line),
      ),
      log,
    ).toBe(true);
    expect(
      lines.some((line) => /request completed 400 \d+ ms/.test(line)),
      log,
    ).toBe(true);
    expect(lines.every((line) => !line.startsWith('{'))).toBe(true);
    expect(log).not.toContain(key);
    expect(log).not.toContain(key.slice(9));
  });

  it('stays JSON when stdout is not a terminal', () => {
    const options = loggerOptions(testConfig(), { pretty: false }) as Record<string, unknown>;
    expect(options.stream).toBeUndefined();
    expect(options.redact).toBeDefined();
  });
});
