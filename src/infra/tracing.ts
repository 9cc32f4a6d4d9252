import { randomBytes } from 'node:crypto';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type pg from 'pg';
import type { Config, TracingConfig } from './config';

/**
 * OpenTelemetry tracing of a delivery, one trace from the publish to the merchant's door: the API's request
 * span (continuing the parcel system's `traceparent`), the outbox hand-off (continuing the publish's context stored
 * with the event), the workflow and each attempt (Temporal's interceptors, worker/tracing.ts), the POST, and
 * Postgres queries.
 *
 * With no OTLP endpoint configured (infra/config.ts), no SDK starts: the API from @opentelemetry/api is its no-op,
 * no hook or interceptor is installed, and the only work left is the `traceparent` every POST carries: the stored
 * publish context's trace id with a fresh span id, made from a few random bytes.
 */

export interface Tracing {
  /** Where finished spans go; the workflow sink hands the workflows' spans to it too. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;

/** The process's tracing, once startTracing ran with an endpoint configured; undefined otherwise. */
export function activeTracing(): Tracing | undefined {
  return started;
}

/** The tracer every span of ours comes from (the API's request spans too). */
export const tracer = () => trace.getTracer('parcel-webhooks');

function sampler(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Starts the SDK for this process when config.tracing is set (once; later calls return the same): a tracer
 * provider with the W3C propagator and AsyncLocalStorage context, batching spans to the OTLP/HTTP exporter of the
 * configured protocol. Returns undefined, having started nothing, when tracing is off.
 */
export function startTracing(config: Config, defaultServiceName: string): Tracing | undefined {
  if (started || !config.tracing) return started;
  const settings = config.tracing;
  const exporter =
    settings.protocol === 'http/json'
      ? new OtlpJsonExporter({ url: settings.tracesUrl })
      : new OtlpProtobufExporter({ url: settings.tracesUrl });
  const resource = envDetectorSync
    .detect()
    .merge(new Resource({ 'service.name': settings.serviceName ?? defaultServiceName, 'process.pid': process.pid }));
  const spanProcessor = new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({ resource, sampler: sampler(settings), spanProcessors: [spanProcessor] });
  provider.register();
  const tracing: Tracing = {
    spanProcessor,
    resource: provider.resource,
    async shutdown() {
      if (started === tracing) started = undefined;
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
    },
  };
  started = tracing;
  return tracing;
}

// ---- W3C traceparent --------------------------------------------------------------------------------------------

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A valid version-00 traceparent's span context (all-zero ids are invalid); undefined for anything else. */
function parseTraceparent(value: string | null | undefined): SpanContext | undefined {
  const match = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!match || /^0+$/.test(match[1] as string) || /^0+$/.test(match[2] as string)) return undefined;
  return {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: parseInt(match[3] as string, 16) & 1,
    isRemote: true,
  };
}

function formatTraceparent(span: Pick<SpanContext, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 1).toString(16).padStart(2, '0')}`;
}

const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A child of `parent` (its trace id, a fresh span id), or of a fresh trace; sampled unless the parent said not. */
function childTraceparent(parent: SpanContext | undefined): string {
  return formatTraceparent({
    traceId: parent?.traceId ?? randomHex(16),
    spanId: randomHex(8),
    traceFlags: parent?.traceFlags ?? TraceFlags.SAMPLED,
  });
}

function activeSpanContext(): SpanContext | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  return span && trace.isSpanContextValid(span) ? span : undefined;
}

/**
 * The trace context a publish stores with its event (events.trace_parent): the active span's (the API request's
 * span, itself continuing the parcel system's traceparent) when tracing runs; otherwise a child of `incoming`
 * (its trace id kept), or of a fresh trace when none came.
 */
export function publishTraceparent(incoming?: string | null): string {
  const active = activeSpanContext();
  return active ? formatTraceparent(active) : childTraceparent(parseTraceparent(incoming));
}

function storedContext(parent: SpanContext | undefined): Context {
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/**
 * Runs `work` in a span continuing a stored publish context (the outbox hand-off, in whichever process dispatches
 * it), so what it starts (the workflow, through the client interceptor, and an early attempt) joins the trace.
 * Without tracing it only runs `work`.
 */
export function withStoredTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  if (!started) return work();
  return tracer().startActiveSpan(
    name,
    { kind: SpanKind.PRODUCER, attributes },
    storedContext(parseTraceparent(traceparent)),
    async (span) => {
      try {
        return await work();
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** What tracePost needs of a POST's outcome. */
export interface PostOutcome {
  statusCode: number | null;
  error: string | null;
}

/**
 * One POST to a merchant in the delivery's trace. `post` gets the `traceparent` to send: the POST span's own
 * context when tracing runs (a child of the attempt's span, or of the stored publish context when the attempt
 * runs outside a workflow), else a fresh child of the stored context. The span carries the request's method,
 * scheme, server and port, and `http.response.status_code`: the endpoint by origin only, never its path or query,
 * which often hold the receiver's own secret (core/telemetry-url.ts).
 */
export async function tracePost<R extends PostOutcome>(
  storedTraceparent: string | null | undefined,
  url: string,
  attributes: Attributes,
  post: (traceparent: string) => Promise<R>,
): Promise<R> {
  const stored = parseTraceparent(storedTraceparent);
  if (!started) return post(childTraceparent(stored));
  const active = activeSpanContext();
  const parent = active && (!stored || active.traceId === stored.traceId) ? context.active() : storedContext(stored);
  const target = new URL(url);
  const span = tracer().startSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': target.hostname,
        'server.port': Number(target.port || 443),
        'url.scheme': target.protocol.replace(':', ''),
        ...attributes,
      },
    },
    parent,
  );
  try {
    const result = await post(formatTraceparent(span.spanContext()));
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    if (result.error !== null) span.setAttribute('error.type', result.error);
    if (result.error !== null || result.statusCode === null || result.statusCode >= 400)
      span.setStatus({ code: SpanStatusCode.ERROR });
    return result;
  } finally {
    span.end();
  }
}

// ---- Postgres ---------------------------------------------------------------------------------------------------

/** A query's short name: the prepared statement's name, else its first SQL keyword. */
function querySummary(args: unknown[]): string {
  const first = args[0] as { name?: string; text?: string } | string | undefined;
  if (typeof first === 'object' && first?.name) return first.name;
  const text = typeof first === 'string' ? first : (first?.text ?? '');
  return (/^\s*(?:WITH\b[\s\S]*?\)\s*)?([A-Za-z]+)/.exec(text)?.[1] ?? 'query').toUpperCase();
}

type QueryFn = (...args: unknown[]) => unknown;

/**
 * A span per query of the pool's clients (`pg <statement>`, `db.system` postgresql), opened in the active
 * context so each lands under the request, hand-off or attempt that ran it. Installed on each new connection;
 * nothing is installed when tracing is off. The SQL text and its values are not recorded (they hold bodies).
 */
export function tracePool(pool: pg.Pool): void {
  if (!started) return;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as QueryFn;
    (client as unknown as { query: QueryFn }).query = (...args: unknown[]) => {
      if (!started) return query(...args);
      const summary = querySummary(args);
      const span = tracer().startSpan(`pg ${summary}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system': 'postgresql',
          'db.system.name': 'postgresql',
          'db.operation.name': summary,
          'db.namespace': client.database ?? '',
        },
      });
      const end = (err?: Error | null) => {
        if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
        span.end();
      };
      // pg-pool's own pool.query calls the client with a callback; other callers get a promise.
      const callback = args[args.length - 1];
      if (typeof callback === 'function') {
        args[args.length - 1] = (err: Error | null, ...rest: unknown[]) => {
          end(err);
          return (callback as QueryFn)(err, ...rest);
        };
        return query(...args);
      }
      const result = query(...args);
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(() => end(), end);
      } else {
        end();
      }
      return result;
    };
  });
}
