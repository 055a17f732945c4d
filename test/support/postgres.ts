/**
 * A throwaway PostgreSQL server for tests and benchmarks: initdb into a temp directory, listen on
 * a free loopback port with the socket in that directory, stop and delete it at the end.
 *
 * - Binaries come from Debian's `postgresql` package (/usr/lib/postgresql/<version>/bin, newest
 *   version first), installed by `scripts/ensure-system-deps.sh` when missing.
 * - PostgreSQL refuses to run as root: when we are root the data directory is handed to the
 *   `postgres` system user and the server runs as that user.
 * - `startPostgres` returns null when no PostgreSQL is installed, so callers can skip and say so.
 * - The server is killed and its directory removed even if the process exits without `stop()`.
 * - A start that finds its port taken (by another process, between `freePort()` and the bind) is
 *   tried again on a new port (`withFreshPorts`).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { exitOnSignal } from './exit-on-signal.ts';
import { freePort, withFreshPorts } from './free-port.ts';

export interface PostgresServer {
  /** Connection string of the `postgres` database as superuser `postgres`. */
  readonly url: string;
  readonly port: number;
  /** Creates a fresh database and returns its connection string. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** fsync in the server (default false: tests do not survive power cuts anyway; benches set true). */
  readonly fsync?: boolean;
}

export function findPostgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

function postgresUser(): { uid: number; gid: number } | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root but there is no `postgres` user to run PostgreSQL as');
  }
}

async function waitUntilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}: ${output()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not start within 30 s: ${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer | null> {
  const bin = findPostgresBin();
  if (bin === null) {
    // On CI the project's own scripts install it (scripts/ensure-system-deps.sh): never skip there.
    if (process.env.CI === 'true') throw new Error('PostgreSQL is not installed (Debian package postgresql)');
    return null;
  }
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'pg-test-'));
  if (user !== null) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const asUser = user === null ? {} : { uid: user.uid, gid: user.gid };
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C', HOME: dir };
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { ...asUser, env, stdio: 'pipe' },
  );
  try {
    return await withFreshPorts(() => launchPostgres(bin, dir, data, asUser, env, options));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Starts `postgres` on the initialised `data` on a free port, and waits until it answers. */
async function launchPostgres(
  bin: string,
  dir: string,
  data: string,
  asUser: { uid?: number; gid?: number },
  env: NodeJS.ProcessEnv,
  options: StartPostgresOptions,
): Promise<PostgresServer> {
  const port = await freePort();
  let log = '';
  const child = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `fsync=${options.fsync === true ? 'on' : 'off'}`,
      '-c',
      'max_connections=50',
      '-c',
      'shared_buffers=64MB',
      // Containers often have a tiny /dev/shm; parallel query workers would need it.
      '-c',
      'max_parallel_workers_per_gather=0',
    ],
    { ...asUser, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
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
  exitOnSignal();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitUntilReady(url, child, () => log);
  } catch (error) {
    // Only the server: its data directory is kept for a try on another port.
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }
    throw error;
  }
  let stopped = false;
  return {
    url,
    port,
    async createDatabase(name: string): Promise<string> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One query on a connection of its own (opened and closed around it): the rows. */
export async function queryOnce(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}
