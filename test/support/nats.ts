/**
 * A throwaway NATS server for tests: `nats-server` from Debian's package (installed by
 * scripts/ensure-system-deps.sh when missing) on a free loopback port, JetStream storage in a
 * temp directory, killed and cleaned at the end (or when the process exits).
 * `startNats` returns null when nats-server is not installed, so callers can skip and say so.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './postgres.ts';

export interface NatsServer {
  /** e.g. `nats://127.0.0.1:4222` */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export function findNatsServer(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/usr/local/bin'])) {
    const candidate = join(dir, 'nats-server');
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return null;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startNats(options: { jetstream?: boolean } = {}): Promise<NatsServer | null> {
  const bin = findNatsServer();
  if (bin === null) {
    // On CI the project's own scripts install it (scripts/ensure-system-deps.sh): never skip there.
    if (process.env.CI === 'true')
      throw new Error('nats-server is not installed (Debian package nats-server)');
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port)];
  if (options.jetstream === true) args.push('-js', '-sd', dir);
  let log = '';
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  child.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  const killOnExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const deadline = Date.now() + 15_000;
  while (!(await portOpen(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      killOnExit();
      process.removeListener('exit', killOnExit);
      throw new Error(`nats-server did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  let stopped = false;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
