/**
 * Writes test/fixtures/signature-vectors.json: cases shared by the sender's tests (src/core/signing.ts) and the
 * receiver's (src/receiver/verify.ts), so the two cannot drift apart. Everything here is fixed (secrets, times,
 * bodies), so running it again reproduces the committed file byte for byte; test/unit/signing.test.ts checks so.
 *
 *   npx tsx scripts/generate-signature-vectors.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { signatureHeader } from '../src/core/signing';

export type VectorExpectation =
  | 'valid'
  | 'missing_timestamp'
  | 'missing_signature'
  | 'timestamp_outside_tolerance'
  | 'signature_mismatch'
  | 'malformed_header';

export interface SignatureVector {
  name: string;
  /** Secrets the receiver is configured with. */
  secrets: string[];
  /** Present when `header` is exactly what the sender emits for `body` at `timestamp` with these secrets, in order. */
  senderSecrets?: string[];
  timestamp: number;
  /** The receiver's clock, Unix seconds. */
  now: number;
  /** The raw body as received, UTF-8. */
  body: string;
  header: string;
  expected: VectorExpectation;
  /** For valid vectors: which of `secrets` matched. */
  matchedSecretIndex?: number;
}

export const VECTORS_PATH = path.join(__dirname, '..', 'test', 'fixtures', 'signature-vectors.json');

const T = 1_767_225_600; // 2026-01-01T00:00:00Z
const SECRET = 'whsec_vectorsPrimary0000000000000000000';
const OLD_SECRET = 'whsec_vectorsOldRotated000000000000000';
const NEW_SECRET = 'whsec_vectorsNewRotated000000000000000';
const WRONG_SECRET = 'whsec_vectorsSomebodyElse0000000000000';

const parcelEvent = {
  id: 'evt_vectors0000000000000001',
  object: 'event',
  type: 'parcel.delivered',
  created: T - 5,
  data: {
    parcel: {
      id: '7d1c2a50-3f4e-4b8a-9c61-0a2b3c4d5e6f',
      parcel_number: 'PCL-000123',
      tracking_number: 'TRK-000123',
      status: 'DELIVERED',
      payment_status: 'PAID',
      total_fee: 350,
      currency: 'KES',
      description: 'Kikoy × 2 — handwoven',
      package_size: 'S',
      recipient_name: 'Wambūi — Nairobi ✓',
      pickup_run_id: '0e9f8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f',
    },
  },
};
const codEvent = {
  id: 'evt_vectors0000000000000002',
  object: 'event',
  type: 'cod.settled',
  created: T - 2,
  data: {
    parcel: { id: parcelEvent.data.parcel.id, parcel_number: 'PCL-000123' },
    cod_settlement: { id: 'cod_vectors01', amount: 1500, currency: 'KES', settled_at: T - 2 },
  },
};
const body = JSON.stringify(parcelEvent);
const asciiBody = JSON.stringify(codEvent);

function sign(bodyText: string, secrets: string[], t = T): string {
  return signatureHeader(bodyText, secrets, t);
}
function v1(bodyText: string, secret: string, t = T): string {
  return sign(bodyText, [secret], t).split(',')[1] as string;
}

/** A header the sender emits verbatim for this body. */
function sent(
  name: string,
  opts: Omit<SignatureVector, 'name' | 'header' | 'senderSecrets'> & { senderSecrets: string[] },
): SignatureVector {
  const { secrets, senderSecrets, timestamp, now, body: bodyText, expected, matchedSecretIndex } = opts;
  const header = sign(bodyText, senderSecrets, timestamp);
  return {
    name,
    secrets,
    senderSecrets,
    timestamp,
    now,
    body: bodyText,
    header,
    expected,
    ...(matchedSecretIndex === undefined ? {} : { matchedSecretIndex }),
  };
}

export function buildVectors(): SignatureVector[] {
  const good = v1(body, SECRET);
  return [
    sent('valid: single secret, ASCII body', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T + 5,
      body: asciiBody,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    sent('valid: non-ASCII body (UTF-8)', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T + 5,
      body,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    sent('valid: empty body', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T,
      body: '',
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    // During a rotation's grace period the engine signs with the current secret first, then the previous one.
    sent('valid: rotation, two v1 in the header, receiver holds only the new secret', {
      secrets: [NEW_SECRET],
      senderSecrets: [NEW_SECRET, OLD_SECRET],
      timestamp: T,
      now: T + 1,
      body,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    sent('valid: rotation, two v1 in the header, receiver still holds only the old secret (second v1 matches)', {
      secrets: [OLD_SECRET],
      senderSecrets: [NEW_SECRET, OLD_SECRET],
      timestamp: T,
      now: T + 1,
      body,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    sent('valid: receiver holds old and new, sender already signs with the new one only (second secret matches)', {
      secrets: [OLD_SECRET, NEW_SECRET],
      senderSecrets: [NEW_SECRET],
      timestamp: T,
      now: T + 1,
      body,
      expected: 'valid',
      matchedSecretIndex: 1,
    }),
    sent('valid: exactly 300 s old', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T + 300,
      body,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    sent('valid: exactly 300 s in the future', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T - 300,
      body,
      expected: 'valid',
      matchedSecretIndex: 0,
    }),
    {
      name: 'valid: unknown scheme v0 is ignored',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},v0=${'ab'.repeat(32)},${good}`,
      expected: 'valid',
      matchedSecretIndex: 0,
    },
    {
      name: 'valid: spaces around chunks (a proxy joining repeated headers with ", ")',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T}, ${good} `,
      expected: 'valid',
      matchedSecretIndex: 0,
    },

    {
      name: 'tampered body (total_fee changed)',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body: body.replace('"total_fee":350', '"total_fee":3500'),
      header: sign(body, [SECRET]),
      expected: 'signature_mismatch',
    },
    {
      name: 're-serialised JSON body (parsed and pretty-printed)',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body: JSON.stringify(parcelEvent, null, 2),
      header: sign(body, [SECRET]),
      expected: 'signature_mismatch',
    },
    {
      name: 're-serialised JSON body (non-ASCII escaped as \\u, as Python json.dumps does)',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body: body.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      header: sign(body, [SECRET]),
      expected: 'signature_mismatch',
    },
    {
      name: 'wrong secret',
      secrets: [WRONG_SECRET],
      timestamp: T,
      now: T,
      body,
      header: sign(body, [SECRET]),
      expected: 'signature_mismatch',
    },
    {
      name: 'captured call replayed with a fresh t (v1 kept)',
      secrets: [SECRET],
      timestamp: T + 3600,
      now: T + 3600,
      body,
      header: `t=${T + 3600},${good}`,
      expected: 'signature_mismatch',
    },
    {
      name: 'uppercase hex (the scheme is lowercase hex, compared exactly)',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},v1=${good.slice(3).toUpperCase()}`,
      expected: 'signature_mismatch',
    },
    {
      name: 'truncated v1',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},${good.slice(0, -1)}`,
      expected: 'signature_mismatch',
    },
    {
      name: 'wrong secret and stale: mismatch wins, staleness is only reported for genuine signatures',
      secrets: [WRONG_SECRET],
      timestamp: T,
      now: T + 3600,
      body,
      header: sign(body, [SECRET]),
      expected: 'signature_mismatch',
    },

    sent('t too old (301 s): replay', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T + 301,
      body,
      expected: 'timestamp_outside_tolerance',
    }),
    sent('t too far in the future (301 s)', {
      secrets: [SECRET],
      senderSecrets: [SECRET],
      timestamp: T,
      now: T - 301,
      body,
      expected: 'timestamp_outside_tolerance',
    }),

    { name: 'missing t', secrets: [SECRET], timestamp: T, now: T, body, header: good, expected: 'missing_timestamp' },
    { name: 'empty header', secrets: [SECRET], timestamp: T, now: T, body, header: '', expected: 'missing_timestamp' },
    {
      name: 'missing v1',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T}`,
      expected: 'missing_signature',
    },
    {
      name: 'only an unknown scheme (v0), no v1',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},v0=${good.slice(3)}`,
      expected: 'missing_signature',
    },
    {
      name: 't is not a whole number',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T}.5,${good}`,
      expected: 'malformed_header',
    },
    {
      name: 't given twice',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},t=${T + 1},${good}`,
      expected: 'malformed_header',
    },
    {
      name: 'chunk without "="',
      secrets: [SECRET],
      timestamp: T,
      now: T,
      body,
      header: `t=${T},${good.slice(3)}`,
      expected: 'malformed_header',
    },
  ];
}

if (require.main === module) {
  writeFileSync(VECTORS_PATH, `${JSON.stringify(buildVectors(), null, 2)}\n`);
  process.stdout.write(`wrote ${VECTORS_PATH}\n`);
}
