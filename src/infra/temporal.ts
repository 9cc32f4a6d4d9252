import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../core/delivery-contract';
import type { Config } from './config';
import { isDependencyOutage } from './outages';

type ConnectionOptions = Parameters<typeof Connection.connect>[0] & Parameters<typeof NativeConnection.connect>[0];

/** Shared by client and worker connections: plain for the dev server, mTLS or API key for Temporal Cloud. */
export function temporalConnectionOptions(config: Config, address: string): ConnectionOptions {
  const { tlsCertPath, tlsKeyPath, apiKey } = config.temporal;
  const options: ConnectionOptions = { address };
  if (tlsCertPath && tlsKeyPath) {
    options.tls = { clientCertPair: { crt: readFileSync(tlsCertPath), key: readFileSync(tlsKeyPath) } };
  } else if (apiKey) {
    options.tls = true;
    options.apiKey = apiKey;
  }
  return options;
}

export function requireTemporalAddress(config: Config): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}

/** A client whose connection opens on first use, so the API starts (and answers /readyz) while Temporal is down. */
export function lazyClient(config: Config): Client {
  const connection = Connection.lazy(temporalConnectionOptions(config, requireTemporalAddress(config)));
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Waiting for an unreachable Temporal at start: 1 s, doubling, at most 10 s apart, for as long as it takes. */
export const TEMPORAL_CONNECT_INITIAL_BACKOFF_MS = 1_000;
export const TEMPORAL_CONNECT_MAX_BACKOFF_MS = 10_000;

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A process started while Temporal is unreachable (deploy order, a restart of the cluster) waits for it instead
 * of exiting: every failed attempt that looks like an outage is logged and retried on a bounded backoff. Anything
 * else (bad TLS files, a refused API key) fails at once. `signal` ends the wait (SIGTERM while waiting).
 */
export async function connectWithBackoff<T>(
  connect: () => Promise<T>,
  options: { what: string; log: (line: string) => void; signal?: AbortSignal },
): Promise<T> {
  let backoffMs = TEMPORAL_CONNECT_INITIAL_BACKOFF_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await connect();
    } catch (err) {
      if (!isDependencyOutage(err) || options.signal?.aborted) throw err;
      options.log(
        `${options.what} unreachable (attempt ${attempt}: ${(err as Error).message.split('\n')[0]}); retrying in ${backoffMs / 1000} s`,
      );
      await pause(backoffMs, options.signal);
      backoffMs = Math.min(backoffMs * 2, TEMPORAL_CONNECT_MAX_BACKOFF_MS);
    }
  }
}

/** The worker's connection, waited for with connectWithBackoff. */
export function connectNativeWithBackoff(
  config: Config,
  options: { address?: string; log: (line: string) => void; signal?: AbortSignal },
): Promise<NativeConnection> {
  const address = options.address ?? requireTemporalAddress(config);
  return connectWithBackoff(() => NativeConnection.connect(temporalConnectionOptions(config, address)), {
    what: `Temporal at ${address}`,
    log: options.log,
    signal: options.signal,
  });
}

/**
 * Signal-with-start under a request id of the caller's choosing. The SDK's signalWithStart makes a fresh id per
 * call, so a retried call (an activity retried after a timeout, say) is a second signal; Temporal ignores a signal
 * whose request id the running workflow has already received. Payloads go through the client's own converter.
 */
export async function signalWithStartOnce(
  client: Client,
  options: {
    requestId: string;
    workflowType: string;
    workflowId: string;
    taskQueue: string;
    args: unknown[];
    signalName: string;
    signalArgs: unknown[];
    staticSummary?: string;
  },
): Promise<void> {
  const converter = client.options.loadedDataConverter.payloadConverter;
  await client.workflowService.signalWithStartWorkflowExecution({
    namespace: client.options.namespace,
    identity: client.options.identity,
    requestId: options.requestId,
    workflowId: options.workflowId,
    workflowType: { name: options.workflowType },
    taskQueue: { name: options.taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    input: { payloads: options.args.map((arg) => converter.toPayload(arg)) },
    signalName: options.signalName,
    signalInput: { payloads: options.signalArgs.map((arg) => converter.toPayload(arg)) },
    userMetadata:
      options.staticSummary === undefined ? undefined : { summary: converter.toPayload(options.staticSummary) },
  });
}

/**
 * Which of these events still have a workflow open (a ladder still running), by the ParcelEventId search attribute:
 * one visibility query per call, whatever the workflow (delivery of a publish, a resend...).
 */
export async function eventIdsWithOpenWorkflows(client: Client, eventIds: string[]): Promise<Set<string>> {
  const open = new Set<string>();
  if (eventIds.length === 0) return open;
  const list = eventIds.map((id) => JSON.stringify(id)).join(', ');
  const query = `ExecutionStatus = "Running" AND ${SEARCH_ATTRIBUTES.eventId.name} IN (${list})`;
  for await (const workflow of client.workflow.list({ query })) {
    const eventId = workflow.typedSearchAttributes.get(SEARCH_ATTRIBUTES.eventId);
    if (eventId) open.add(eventId);
  }
  return open;
}
