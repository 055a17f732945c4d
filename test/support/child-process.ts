/**
 * Helpers for crash tests that run code in a child process (through tsx) and kill it.
 *
 * - `spawnTs` starts `node --import tsx <file> ...args`, collecting stdout lines.
 * - `waitForLine` resolves on the first (past or future) stdout line matching a predicate.
 * - `killHard` sends SIGKILL and resolves when the process is gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface TsChild {
  readonly process: ChildProcess;
  readonly lines: string[];
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  killHard(): Promise<void>;
  readonly exited: Promise<number | null>;
}

export function spawnTs(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): TsChild {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const watchers: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  let partial = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (let i = watchers.length - 1; i >= 0; i--) {
        if (watchers[i]!.match(line)) {
          watchers[i]!.resolve(line);
          watchers.splice(i, 1);
        }
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // 'close', not 'exit': it comes after the last stdout chunk, so a line the child printed just
  // before it was killed (an acknowledgement the crash tests count) is in `lines` by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    process: child,
    lines,
    exited,
    waitForLine(match, timeoutMs = 30_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching line within ${timeoutMs} ms; stderr: ${stderr}`)),
          timeoutMs,
        );
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`child exited (${code}) before a matching line; stderr: ${stderr}`));
        });
        watchers.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
    async killHard() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
