/**
 * The real service (`src/app/main.ts`) in a child process on a free port, for tests that kill or
 * restart it: started on a data directory, ready once it logs `listening`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServiceChild {
  readonly process: ChildProcess;
  readonly port: number;
  /** The state hash the start logged after recovery (null when it logged none). */
  readonly recoveredHash: string | null;
  /** Where it keeps its snapshots and read store, and its journal, as `listening` logged them. */
  readonly storage: unknown;
  readonly journal: unknown;
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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the service did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the service exited early with ${code}`)));
    lines.on('line', (line) => {
      const entry = parseJson(line);
      if (entry?.msg === 'recovered') recoveredHash = String(entry.stateHash);
      if (entry?.msg === 'listening') {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({
          process: child,
          port: Number(entry.port),
          recoveredHash,
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
