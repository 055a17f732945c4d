/**
 * Throwaway NATS servers for tests: `nats-server` from Debian's package (installed by
 * scripts/ensure-system-deps.sh when missing) on free loopback ports, JetStream storage in temp
 * directories, killed and cleaned at the end (or when the process exits).
 * - `startNats`: one server.
 * - `startNatsCluster`: a JetStream cluster of several servers routed to each other, for streams
 *   with replicas; one member can be killed (as a crash) and started again on its own storage.
 * Both return null when nats-server is not installed, so callers can skip and say so.
 * Ports are picked free and bound a moment later by nats-server, so another process can take one
 * in between: a start that finds its port taken is tried again on new ports (`withFreshPorts`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectNats } from 'nats';
import { exitOnSignal } from './exit-on-signal.ts';
import { freePort, withFreshPorts } from './free-port.ts';

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

function installedNatsServer(): string | null {
  const bin = findNatsServer();
  // On CI the project's own scripts install it (scripts/ensure-system-deps.sh): never skip there.
  if (bin === null && process.env.CI === 'true') {
    throw new Error('nats-server is not installed (Debian package nats-server)');
  }
  return bin;
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

interface NatsProcess {
  /** SIGKILL, as a crash; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s); resolves once the process is gone. */
  stop(): Promise<void>;
}

/**
 * Spawns nats-server and waits until it is ready and accepts connections on `port` (its own
 * "ready" line too: something else may be listening on a port it failed to bind).
 */
async function spawnNats(bin: string, args: readonly string[], port: number): Promise<NatsProcess> {
  let log = '';
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const keepLog = (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keepLog);
  child.stderr?.on('data', keepLog);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  exitOnSignal();
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', killOnExit);
  };
  const deadline = Date.now() + 15_000;
  while (!(log.includes('Server is ready') && (await portOpen(port)))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await end('SIGKILL');
      throw new Error(`nats-server did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}

function removeOnExit(dir: string): () => void {
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', remove);
  return () => {
    process.removeListener('exit', remove);
    remove();
  };
}

export async function startNats(options: { jetstream?: boolean } = {}): Promise<NatsServer | null> {
  const bin = installedNatsServer();
  if (bin === null) return null;
  return withFreshPorts(() => startNatsOnce(bin, options));
}

async function startNatsOnce(bin: string, options: { jetstream?: boolean }): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  const removeDir = removeOnExit(dir);
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port)];
  if (options.jetstream === true) args.push('-js', '-sd', dir);
  const server = await spawnNats(bin, args, port).catch((error: unknown) => {
    removeDir();
    throw error;
  });
  let stopped = false;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      removeDir();
    },
  };
}

export interface NatsClusterMember {
  readonly name: string;
  readonly url: string;
  /** SIGKILL, as a crash (its storage stays). */
  kill(): Promise<void>;
  /** Starts it again on its storage, with the same name and ports. */
  restart(): Promise<void>;
}

export interface NatsCluster {
  /** Every member's client URL, comma-separated, as JOURNAL_URL takes them. */
  readonly url: string;
  readonly members: readonly NatsClusterMember[];
  member(name: string): NatsClusterMember;
  stop(): Promise<void>;
}

/** A JetStream cluster of `size` servers (named n1, n2, …) routed to each other on loopback. */
export async function startNatsCluster(size = 3): Promise<NatsCluster | null> {
  const bin = installedNatsServer();
  if (bin === null) return null;
  return withFreshPorts(() => startNatsClusterOnce(bin, size));
}

async function startNatsClusterOnce(bin: string, size: number): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  const removeDir = removeOnExit(dir);
  const ports: { client: number; route: number }[] = [];
  for (let i = 0; i < size; i++) ports.push({ client: await freePort(), route: await freePort() });
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
  const argsOf = (i: number) => [
    ...['-a', '127.0.0.1', '-p', String(ports[i]!.client), '-n', `n${i + 1}`],
    ...['-js', '-sd', join(dir, `n${i + 1}`)],
    ...['--cluster_name', 'test', '--cluster', `nats://127.0.0.1:${ports[i]!.route}`, '--routes', routes],
  ];
  const running: (NatsProcess | null)[] = [];
  const stopAll = async () => {
    await Promise.all(running.map((server) => server?.stop()));
    removeDir();
  };
  // Started together: JetStream elects a meta leader once the routes are up.
  const started = await Promise.allSettled(ports.map((p, i) => spawnNats(bin, argsOf(i), p.client)));
  for (const result of started) running.push(result.status === 'fulfilled' ? result.value : null);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await stopAll();
    throw failed.reason;
  }
  const url = ports.map((p) => `nats://127.0.0.1:${p.client}`).join(',');
  try {
    await untilJetStreamAnswers(url);
  } catch (error) {
    await stopAll();
    throw error;
  }
  const members = ports.map(
    (p, i): NatsClusterMember => ({
      name: `n${i + 1}`,
      url: `nats://127.0.0.1:${p.client}`,
      async kill() {
        await running[i]?.kill();
        running[i] = null;
      },
      async restart() {
        await running[i]?.stop();
        running[i] = await spawnNats(bin, argsOf(i), p.client);
      },
    }),
  );
  let stopped = false;
  return {
    url,
    members,
    member(name) {
      const found = members.find((m) => m.name === name);
      if (found === undefined) throw new Error(`no cluster member ${name}`);
      return found;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopAll();
    },
  };
}

/** Until the cluster's JetStream has a meta leader: account requests time out before that. */
async function untilJetStreamAnswers(servers: string): Promise<void> {
  const nc = await connectNats({ servers: servers.split(','), name: 'test cluster probe' });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await (await nc.jetstreamManager({ timeout: 1_000 })).getAccountInfo();
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error('the NATS cluster elected no JetStream leader in 30 s', { cause: error });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await nc.close();
  }
}
