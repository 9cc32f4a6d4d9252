import { createWriteStream } from 'node:fs';
import { Session } from 'node:inspector';

/**
 * The SDK runs workflow code in a worker thread of its own, whose V8 heap `process.memoryUsage()` and
 * `v8.writeHeapSnapshot()` of the main thread do not see. The inspector's NodeWorker domain reaches it without
 * touching the SDK: the process's own inspector session attaches to its worker threads and relays DevTools
 * protocol messages to them (Runtime.getHeapUsage, HeapProfiler.takeHeapSnapshot).
 */
export interface WorkflowThreadInspector {
  /** Bytes of V8 heap in use in the workflow thread after a full GC there, and the heap's size. */
  heapUsage(): Promise<{ usedSize: number; totalSize: number }>;
  /** Writes the workflow thread's heap snapshot to `file`; returns the file. */
  writeHeapSnapshot(file: string): Promise<string>;
  close(): Promise<void>;
}

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
};

export async function openWorkflowThreadInspector(): Promise<WorkflowThreadInspector> {
  const session = new Session();
  session.connect();
  const sessions: string[] = [];
  const pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(m: Message) => void>();
  session.on('NodeWorker.attachedToWorker', (event: { params: { sessionId: string } }) => {
    sessions.push(event.params.sessionId);
  });
  session.on('NodeWorker.receivedMessageFromWorker', (event: { params: { message: string } }) => {
    const message = JSON.parse(event.params.message) as Message;
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (waiter) {
      pending.delete(message.id as number);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message);
    } else for (const listen of listeners) listen(message);
  });
  await post(session, 'NodeWorker.enable', { waitForDebuggerOnStart: false });
  let nextId = 1;
  const send = async (method: string, params: Record<string, unknown> = {}): Promise<Message> => {
    // The SDK's workflow thread is the process's only worker thread (workflowThreadPoolSize 1 with a reusable context).
    const sessionId = sessions[0];
    if (!sessionId) throw new Error('no worker thread attached');
    const id = nextId++;
    const answered = new Promise<Message>((resolve, reject) => pending.set(id, { resolve, reject }));
    await post(session, 'NodeWorker.sendMessageToWorker', {
      sessionId,
      message: JSON.stringify({ id, method, params }),
    });
    return answered;
  };
  return {
    async heapUsage() {
      await send('HeapProfiler.collectGarbage');
      return (await send('Runtime.getHeapUsage')).result as { usedSize: number; totalSize: number };
    },
    async writeHeapSnapshot(file) {
      const out = createWriteStream(file);
      const onChunk = (m: Message) => {
        if (m.method === 'HeapProfiler.addHeapSnapshotChunk') out.write((m.params as { chunk: string }).chunk);
      };
      listeners.add(onChunk);
      try {
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        listeners.delete(onChunk);
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
      return file;
    },
    async close() {
      session.disconnect();
    },
  };
}

function post(session: Session, method: string, params: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
  );
}
