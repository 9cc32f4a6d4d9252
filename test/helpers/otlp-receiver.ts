import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OTLP/HTTP traces receiver on loopback: POST /v1/traces in JSON (`application/json`) or protobuf
 * (`application/x-protobuf`), decoded here from the wire format itself (no OpenTelemetry code), so a test sees
 * the spans exactly as a collector would.
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  /** The exporting process's resource attributes `service.name` and `process.pid`. */
  service: string;
  pid: number | undefined;
  format: 'json' | 'protobuf';
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  contentTypes: string[];
  /** Each export request's body as it arrived, undecoded: what a collector would store. */
  bodies: Buffer[];
  inTrace(traceId: string): ReceivedSpan[];
  close(): Promise<void>;
}

// ---- protobuf wire format -----------------------------------------------------------------------------------

interface Field {
  no: number;
  wire: number;
  bytes?: Buffer;
  int?: bigint;
}

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[at++] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, at];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [key, next] = readVarint(buf, at);
    at = next;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [int, after] = readVarint(buf, at);
      out.push({ no, wire, int });
      at = after;
    } else if (wire === 1) {
      out.push({ no, wire, bytes: buf.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 2) {
      const [length, after] = readVarint(buf, at);
      out.push({ no, wire, bytes: buf.subarray(after, after + Number(length)) });
      at = after + Number(length);
    } else if (wire === 5) {
      out.push({ no, wire, bytes: buf.subarray(at, at + 4) });
      at += 4;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
  return out;
}

const sub = (list: Field[], no: number) => list.filter((f) => f.no === no).map((f) => f.bytes as Buffer);

/** AnyValue: string 1, bool 2, int 3, double 4. */
function anyValue(buf: Buffer): unknown {
  const [field] = fields(buf);
  if (!field) return undefined;
  if (field.no === 1) return (field.bytes as Buffer).toString('utf8');
  if (field.no === 2) return field.int === 1n;
  if (field.no === 3) return Number(BigInt.asIntN(64, field.int as bigint));
  if (field.no === 4) return (field.bytes as Buffer).readDoubleLE(0);
  return undefined;
}

function protoAttributes(list: Buffer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list) {
    const parts = fields(kv);
    const key = sub(parts, 1)[0]?.toString('utf8') ?? '';
    const value = sub(parts, 2)[0];
    out[key] = value ? anyValue(value) : undefined;
  }
  return out;
}

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of sub(fields(body), 1)) {
    const rs = fields(resourceSpans);
    const resource = protoAttributes(sub(fields(sub(rs, 1)[0] ?? Buffer.alloc(0)), 1));
    for (const scopeSpans of sub(rs, 2)) {
      for (const spanBytes of sub(fields(scopeSpans), 2)) {
        const span = fields(spanBytes);
        spans.push({
          traceId: sub(span, 1)[0]?.toString('hex') ?? '',
          spanId: sub(span, 2)[0]?.toString('hex') ?? '',
          parentSpanId: sub(span, 4)[0]?.toString('hex') ?? '',
          name: sub(span, 5)[0]?.toString('utf8') ?? '',
          attributes: protoAttributes(sub(span, 9)),
          service: String(resource['service.name']),
          pid: resource['process.pid'] as number | undefined,
          format: 'protobuf',
        });
      }
    }
  }
  return spans;
}

// ---- JSON ---------------------------------------------------------------------------------------------------

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

function jsonAttributes(list: JsonKeyValue[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list) {
    out[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
  }
  return out;
}

function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: Array<{
        spans?: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          attributes?: JsonKeyValue[];
        }>;
      }>;
    }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        spans.push({
          traceId: span.traceId.toLowerCase(),
          spanId: span.spanId.toLowerCase(),
          parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
          name: span.name,
          attributes: jsonAttributes(span.attributes),
          service: String(resource['service.name']),
          pid: resource['process.pid'] as number | undefined,
          format: 'json',
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const bodies: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      bodies.push(body);
      try {
        if (type === 'application/json') {
          spans.push(...decodeJson(body));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else if (type === 'application/x-protobuf') {
          spans.push(...decodeProtobuf(body));
          // An empty ExportTraceServiceResponse.
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.alloc(0));
        } else {
          res.writeHead(415).end();
        }
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    bodies,
    inTrace: (traceId) => spans.filter((span) => span.traceId === traceId),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
