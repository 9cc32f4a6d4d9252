import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  constructEvent,
  constructEventWithSignature,
  verifySignature,
  WebhookVerificationError,
  type CodSettledEvent,
  type VerificationFailureReason,
} from '../../../src/receiver/index';
import type { SignatureVector } from '../../../scripts/generate-signature-vectors';

const ROOT = path.join(__dirname, '..', '..', '..');
const vectors = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'fixtures', 'signature-vectors.json'), 'utf8'),
) as SignatureVector[];

function failureOf(run: () => unknown): VerificationFailureReason | 'valid' {
  try {
    run();
    return 'valid';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
}

const SECRET = 'whsec_unitTestSecret';
const T = 1_767_225_600;
function sign(body: string | Buffer, t: number, secret = SECRET): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
}

describe('receiver verification against the shared vectors', () => {
  it('has a vector for every failure reason the verifier can give', () => {
    const expected = new Set(vectors.map((v) => v.expected));
    for (const reason of [
      'valid',
      'missing_timestamp',
      'missing_signature',
      'timestamp_outside_tolerance',
      'signature_mismatch',
      'malformed_header',
    ]) {
      expect(expected).toContain(reason);
    }
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const opts = { now: () => v.now };
    const bodies = [v.body, Buffer.from(v.body, 'utf8'), new Uint8Array(Buffer.from(v.body, 'utf8'))];
    for (const body of bodies) {
      expect(failureOf(() => verifySignature(body, v.header, v.secrets, opts))).toBe(v.expected);
    }
    if (v.expected === 'valid') {
      expect(verifySignature(v.body, v.header, v.secrets, opts)).toEqual({
        timestamp: v.timestamp,
        matchedSecretIndex: v.matchedSecretIndex,
      });
    }
  });
});

describe('verifySignature', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'parcel.delivered',
    created: T,
    data: { parcel: { recipient_name: 'Wambūi — Nairobi ✓' } },
  });
  const header = sign(body, T);
  afterEach(() => vi.useRealTimers());

  it('throws a typed error with a reason and a message that names no secret', () => {
    let caught: unknown;
    try {
      verifySignature(body, header, 'whsec_other', { now: () => T });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WebhookVerificationError);
    expect(caught).toBeInstanceOf(Error);
    expect((caught as WebhookVerificationError).reason).toBe('signature_mismatch');
    expect((caught as WebhookVerificationError).name).toBe('WebhookVerificationError');
    expect((caught as Error).message).not.toContain('whsec_');
  });

  it('rejects a body decoded with the wrong charset: non-ASCII must stay the exact UTF-8 bytes', () => {
    const latin1 = Buffer.from(body, 'utf8').toString('latin1');
    expect(failureOf(() => verifySignature(latin1, header, SECRET, { now: () => T }))).toBe('signature_mismatch');
    expect(failureOf(() => verifySignature(Buffer.from(body, 'utf8'), header, SECRET, { now: () => T }))).toBe('valid');
  });

  it('rejects a body parsed and re-serialised by a framework', () => {
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect(failureOf(() => verifySignature(reserialised, header, SECRET, { now: () => T }))).toBe('signature_mismatch');
  });

  it('rejects a replay of a genuine call once the timestamp is older than the tolerance', () => {
    expect(failureOf(() => verifySignature(body, header, SECRET, { now: () => T + 300 }))).toBe('valid');
    expect(failureOf(() => verifySignature(body, header, SECRET, { now: () => T + 301 }))).toBe(
      'timestamp_outside_tolerance',
    );
  });

  it('honours toleranceSeconds', () => {
    expect(failureOf(() => verifySignature(body, header, SECRET, { now: () => T + 60, toleranceSeconds: 30 }))).toBe(
      'timestamp_outside_tolerance',
    );
    expect(
      failureOf(() => verifySignature(body, header, SECRET, { now: () => T + 3000, toleranceSeconds: 3600 })),
    ).toBe('valid');
  });

  it('uses the system clock when no clock is injected', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((T + 10) * 1000);
    expect(failureOf(() => verifySignature(body, header, SECRET))).toBe('valid');
    vi.setSystemTime((T + 301) * 1000);
    expect(failureOf(() => verifySignature(body, header, SECRET))).toBe('timestamp_outside_tolerance');
  });

  it('accepts any of several secrets and says which one matched', () => {
    const result = verifySignature(body, header, ['whsec_old', SECRET, 'whsec_later'], { now: () => T });
    expect(result).toEqual({ timestamp: T, matchedSecretIndex: 1 });
  });

  it('accepts the header as Node gives a repeated header (joined) or as an array', () => {
    const [t, v1] = header.split(',') as [string, string];
    expect(failureOf(() => verifySignature(body, [t, v1], SECRET, { now: () => T }))).toBe('valid');
    expect(failureOf(() => verifySignature(body, undefined, SECRET, { now: () => T }))).toBe('missing_timestamp');
    expect(failureOf(() => verifySignature(body, null, SECRET, { now: () => T }))).toBe('missing_timestamp');
  });

  it('treats configuration mistakes as programming errors, not failed deliveries', () => {
    expect(() => verifySignature(body, header, [], { now: () => T })).toThrow(TypeError);
    expect(() => verifySignature(body, header, '', { now: () => T })).toThrow(TypeError);
    expect(() => verifySignature(body, header, SECRET, { toleranceSeconds: -1 })).toThrow(TypeError);
    // A parsed body is the classic mistake; say so instead of reporting a mismatch.
    expect(() => verifySignature(JSON.parse(body) as never, header, SECRET, { now: () => T })).toThrow(
      /raw request body/,
    );
  });
});

describe('constructEvent', () => {
  const event: CodSettledEvent = {
    id: 'evt_cod1',
    object: 'event',
    type: 'cod.settled',
    created: T,
    data: {
      parcel: { id: 'p1', parcel_number: 'PCL-1' },
      cod_settlement: { id: 'cod_1', amount: 1500, currency: 'KES', settled_at: T },
    },
  };
  const body = Buffer.from(JSON.stringify(event), 'utf8');

  it('verifies, then returns the typed event', () => {
    const received = constructEvent(body, sign(body, T), SECRET, { now: () => T });
    expect(received).toEqual(event);
    // ParcelEvent is a union on `type`: checking the kind narrows `data` to that kind's shape.
    expect(received.type === 'cod.settled' && received.data.cod_settlement.amount).toBe(1500);
    const { signature } = constructEventWithSignature(body.subarray(0), sign(body, T), [SECRET], { now: () => T });
    expect(signature).toEqual({ timestamp: T, matchedSecretIndex: 0 });
  });

  it('never parses a body whose signature fails', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(failureOf(() => constructEvent('{"id":', sign(body, T), SECRET, { now: () => T }))).toBe(
        'signature_mismatch',
      );
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it('reports a correctly signed body that is not an event as invalid_payload', () => {
    for (const text of ['not json', '[]', '{"id":"evt_1","object":"event"}', 'null']) {
      expect(failureOf(() => constructEvent(text, sign(text, T), SECRET, { now: () => T }))).toBe('invalid_payload');
    }
  });

  it('reads a Uint8Array that is a view into a larger buffer', () => {
    const padded = Buffer.concat([Buffer.from('xxxx'), body, Buffer.from('yyyy')]);
    const view = new Uint8Array(padded.buffer, padded.byteOffset + 4, body.length);
    expect(constructEvent(view, sign(body, T), SECRET, { now: () => T }).id).toBe('evt_cod1');
  });
});

describe('the receiver entry point stays independent of the engine', () => {
  it('imports nothing but node:crypto and its own files', () => {
    const files = [
      'src/receiver/index.ts',
      'src/receiver/verify.ts',
      'src/receiver/construct-event.ts',
      'src/receiver/types.ts',
    ];
    for (const file of files) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      const specifiers = [...source.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
      // Its own files by their .js name, so the same sources build as ES modules and as CommonJS.
      for (const specifier of specifiers)
        expect([file, specifier]).toSatisfy(([, s]) => s === 'node:crypto' || /^\.\/[a-z-]+\.js$/.test(s as string));
    }
    const verifySource = readFileSync(path.join(ROOT, 'src', 'receiver/verify.ts'), 'utf8');
    expect([...verifySource.matchAll(/from\s+['"]([^'"]+)['"]/g)].map((m) => m[1])).toEqual(['node:crypto']);
  });

  it('is published as parcel-webhooks/receiver, pointing where tsconfig.build.json emits it', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports?: Record<string, unknown>;
    };
    expect(pkg.exports?.['./receiver']).toEqual({
      types: './dist/receiver/index.d.ts',
      default: './dist/receiver/index.js',
    });
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
      include: string[];
      compilerOptions: { outDir: string; rootDir: string };
    };
    // src/receiver/index.ts compiles to dist/receiver/index.js.
    expect(build.include).toContain('src');
    expect(build.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: 'src' });
  });
});
