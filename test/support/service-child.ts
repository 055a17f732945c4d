/**
 * The real service (`src/app/main.ts`) in a child process on a free port, for tests that kill or
 * restart it: started on a data directory, ready once it logs `listening`.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServiceChild {
  readonly process: ChildProcess;
  readonly port: number;
  /** The state hash the start logged after recovery (null when it logged none). */
  readonly recoveredHash: string | null;
  /** How the start recovered, as its `recovered` line logged it (null when it logged none). */
  readonly recovery: ChildRecovery | null;
  /** Seqs of the snapshots saved since the start (inline or by the replica), in order, as logged. */
  readonly snapshotsSaved: readonly number[];
  /** Resolves with the seq of the first snapshot saved at `seq` or later (one saved already included). */
  snapshotSaved(seq: number): Promise<number>;
  /** Where it keeps its snapshots and read store, and its journal, as `listening` logged them. */
  readonly storage: unknown;
  readonly journal: unknown;
}

export interface ChildRecovery {
  /** The snapshot recovery started from (null: the journal from seq 1). */
  readonly snapshotSeq: number | null;
  /** Journal commands replayed on top of it. */
  readonly replayed: number;
  readonly lastSeq: number;
  readonly checkpointsVerified: number;
}

/**
 * The child's environment: loopback, any free port, no simulator or rate limits; `extra` adds or
 * overrides settings (the stores' DATABASE_URL, JOURNAL_URL, ...).
 */
export function serviceEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    SIMULATOR: 'off',
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export function startServiceChild(dataDir: string, extra: NodeJS.ProcessEnv = {}): Promise<ServiceChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts'], {
    env: serviceEnv(dataDir, extra),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  let recoveredHash: string | null = null;
  let recovery: ChildRecovery | null = null;
  const snapshotsSaved: number[] = [];
  const waiting: { seq: number; resolve: (seq: number) => void }[] = [];
  const snapshotSaved = (seq: number) =>
    new Promise<number>((resolve) => {
      const saved = snapshotsSaved.find((at) => at >= seq);
      if (saved === undefined) waiting.push({ seq, resolve });
      else resolve(saved);
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the service exited early with ${code}`)));
    lines.on('line', (line) => {
      const entry = parseJson(line);
      if (entry?.msg === 'recovered') {
        recoveredHash = String(entry.stateHash);
        recovery = {
          snapshotSeq: entry.snapshotSeq === null ? null : Number(entry.snapshotSeq),
          replayed: Number(entry.replayed),
          lastSeq: Number(entry.lastSeq),
          checkpointsVerified: Number(entry.checkpointsVerified),
        };
      }
      if (entry?.msg === 'snapshot saved' || entry?.msg === 'snapshot saved by the replica') {
        const seq = Number(entry.seq);
        snapshotsSaved.push(seq);
        for (const waiter of waiting.filter((w) => w.seq <= seq)) {
          waiting.splice(waiting.indexOf(waiter), 1);
          waiter.resolve(seq);
        }
      }
      if (entry?.msg === 'listening') {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({
          process: child,
          port: Number(entry.port),
          recoveredHash,
          recovery,
          snapshotsSaved,
          snapshotSaved,
          storage: entry.storage,
          journal: entry.journal,
        });
      }
    });
  });
}

/** SIGKILL, resolved once the process is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export function parseJson(line: string): Record<string, unknown> | null {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The last seq the service stamped (`venue_sequence` in its metrics). */
export async function sequence(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('venue_sequence '));
  assert.ok(line !== undefined, 'venue_sequence in /metrics');
  return Number(line.split(' ')[1]);
}

export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
