/**
 * A SQLite writer on a worker thread: transactions (and their fsyncs) run off the event loop.
 * The journal uses it so requests keep being parsed, applied and queued (into the next, larger
 * group commit) while a batch is being made durable; the read store so its row writes cost the
 * event loop only the message.
 *
 * Invariants:
 * - Transactions run in submission order (the worker handles messages one by one); each promise
 *   resolves only after its transaction committed.
 * - The worker owns the only write connection; the main thread keeps its own connection for
 *   reads (WAL lets readers see every committed transaction).
 * - If the worker fails or exits unexpectedly, every pending and later write is rejected (the
 *   committer then poisons the journal, as for any write failure), and the worker is stopped, so
 *   its connection cannot hold the write lock against a writer started in its place.
 * - The worker is referenced only while a write is pending, so an idle journal never keeps a
 *   process alive.
 *
 * The worker body is plain JavaScript evaluated from a string: it needs no TypeScript loader, and
 * loads better-sqlite3 from the path this module resolves.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqliteModule);
const db = new Database(workerData.path);
for (const pragma of workerData.pragmas) db.pragma(pragma);
const prepared = new Map();
function statement(sql) {
  let found = prepared.get(sql);
  if (found === undefined) {
    if (prepared.size > 500) prepared.clear();
    found = db.prepare(sql);
    prepared.set(sql, found);
  }
  return found;
}
function param(value) {
  return ArrayBuffer.isView(value) && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}
// The params arrays are this thread's own copies (structured clone): converted in place, and bound
// as one array (spreading tens of thousands of arguments cost more than the insert).
// \`changes\` (when asked for) collects each statement's count of rows changed.
const runAll = db.transaction((statements, changes) => {
  for (const s of statements) {
    const params = s.params;
    for (let i = 0; i < params.length; i++) params[i] = param(params[i]);
    const info = statement(s.sql).run(params);
    if (changes !== null) changes.push(info.changes);
  }
});
parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const started = performance.now();
    const changes = message.counted ? [] : null;
    runAll(message.statements, changes);
    parentPort.postMessage({ id: message.id, error: null, ms: performance.now() - started, changes });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String((error && error.stack) || error) });
  }
});
`;

/** One statement of a transaction; Uint8Array parameters are bound as blobs. */
export interface WriteStatement {
  readonly sql: string;
  readonly params: readonly (number | string | null | Uint8Array)[];
}

/** What `runCounted` resolves with. */
export interface CountedWrite {
  readonly ms: number;
  /** Rows changed by each statement, in order. */
  readonly changes: readonly number[];
}

interface WriteAnswer {
  readonly id: number;
  readonly error: string | null;
  readonly ms?: number;
  readonly changes?: readonly number[] | null;
}

interface PendingWrite {
  readonly id: number;
  readonly resolve: (ms: number, changes: readonly number[] | null) => void;
  readonly reject: (error: Error) => void;
}

export class SqliteWriterThread {
  private readonly worker: Worker;
  /**
   * Writes awaiting their answer, oldest first: the worker answers in submission order. A queue,
   * not a Map keyed by id: V8 keeps a rehashed Map's old table, with its entries, linked to the new
   * one, so a long-lived Map with an entry added and removed per write made every write's promise
   * chain (and the commands and results it resolves) survive scavenges into the old generation.
   */
  private pending: PendingWrite[] = [];
  private nextId = 1;
  private failure: Error | null = null;
  private exited: Promise<void>;

  /** Starts the worker on an existing database (schema created by the caller), pragmas first. */
  constructor(path: string, pragmas: readonly string[]) {
    const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, sqliteModule, pragmas: [...pragmas] },
    });
    this.worker.unref();
    this.worker.on('message', (answer: WriteAnswer) => {
      const waiting = this.pending[0];
      if (waiting === undefined || waiting.id !== answer.id) {
        this.fail(new Error(`journal writer answered write ${answer.id} out of order`));
        return;
      }
      this.pending.shift();
      if (this.pending.length === 0) this.worker.unref();
      if (answer.error === null) waiting.resolve(answer.ms ?? 0, answer.changes ?? null);
      else waiting.reject(new Error(`journal writer: ${answer.error}`));
    });
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        this.fail(new Error(`journal writer thread exited (${code})`));
        resolve();
      });
    });
  }

  /**
   * Runs the statements in one transaction on the worker; resolves once it committed, with the ms
   * the transaction took on the worker (its fsync included, the messages there and back not).
   */
  run(statements: readonly WriteStatement[]): Promise<number> {
    return this.submit(statements, false, (resolve) => resolve);
  }

  /**
   * As `run`, and resolves with the number of rows each statement changed (in order) as well.
   */
  runCounted(statements: readonly WriteStatement[]): Promise<CountedWrite> {
    return this.submit<CountedWrite>(
      statements,
      true,
      (resolve) => (ms, changes) => resolve({ ms, changes: changes ?? [] }),
    );
  }

  private submit<T>(
    statements: readonly WriteStatement[],
    counted: boolean,
    settle: (resolve: (value: T) => void) => PendingWrite['resolve'],
  ): Promise<T> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0) this.worker.ref();
      this.pending.push({ id, resolve: settle(resolve), reject });
      this.worker.postMessage(counted ? { id, statements, counted } : { id, statements });
    });
  }

  /** Why writes are refused (the worker failed, exited or was closed); null while it works. */
  get failed(): Error | null {
    return this.failure;
  }

  /** Closes the worker's connection and waits for the thread to end (after pending writes). */
  async close(): Promise<void> {
    if (this.failure === null) {
      this.worker.ref();
      this.worker.postMessage({ close: true });
    }
    await this.exited;
  }

  private fail(error: Error): void {
    if (this.failure === null) {
      this.failure = error;
      // A worker still running after an 'error' or an answer out of order is stopped; one that
      // exited is not affected.
      void this.worker.terminate();
    }
    const waiting = this.pending;
    this.pending = [];
    for (const write of waiting) write.reject(this.failure);
  }
}
