/**
 * The NATS journal while its server is away: the client dials it again for as long as the
 * journal is open, so an append made during an outage shorter than the publish deadline is
 * acknowledged once the server is back (the client used to give up after 10 tries and fail the
 * journal before that deadline); and closing during an outage is prompt. The server is this
 * file's own nats-server, stopped and started again on the same port and storage.
 *
 * Real time: the outage is a real server's, and nats.js redials on its own timers. With 100 ms
 * between tries, 10 tries (nats.js' default limit) take at most 2 s; the server stays away 3 s.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { NatsJournal } from '../../src/store/nats/nats-journal.ts';
import { freePort } from '../support/free-port.ts';
import { findNatsServer } from '../support/nats.ts';

const bin = findNatsServer();
if (bin === null && process.env.CI === 'true') throw new Error('nats-server is not installed');
const dir = mkdtempSync(join(tmpdir(), 'nats-reconnect-'));
const port = await freePort();
let child: ChildProcess | null = null;
const killOnExit = () => child?.kill('SIGKILL');
process.once('exit', killOnExit);

const listening = () =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function startServer(): Promise<void> {
  child = spawn(bin!, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
  const deadline = Date.now() + 15_000;
  while (!(await listening())) {
    if (Date.now() > deadline) throw new Error('nats-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopServer(): Promise<void> {
  const running = child;
  child = null;
  if (running === null || running.exitCode !== null) return;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  running.kill('SIGTERM');
  await exited;
}

after(async () => {
  await stopServer();
  process.removeListener('exit', killOnExit);
  rmSync(dir, { recursive: true, force: true });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('an append during a server outage shorter than the publish deadline is acknowledged once it is back; close during one is prompt', {
  skip: bin === null && 'nats-server is not installed',
}, async () => {
  await startServer();
  const target = { servers: `nats://127.0.0.1:${port}`, stream: 'RECONNECT', replicas: 1 };
  const options = { ...target, reconnectWaitMs: 100, ackTimeoutMs: 8_000 };
  const journal = await NatsJournal.open<{ type: string }>(options);
  try {
    await journal.append({ seq: 1, ts: 1, command: { type: 'before' } });
    await stopServer();
    const during = journal.append({ seq: 2, ts: 2, command: { type: 'during' } });
    during.catch(() => undefined);
    await pause(3_000);
    await startServer();
    await during;
    await journal.append({ seq: 3, ts: 3, command: { type: 'after' } });
    assert.deepEqual(await journal.last(), { seq: 3, ts: 3 });
  } finally {
    await journal.close();
  }
  const reopened = await NatsJournal.open<{ type: string }>(options);
  const seqs: number[] = [];
  try {
    for await (const batch of reopened.readBatches(1)) for (const entry of batch) seqs.push(entry.seq);
  } finally {
    // Closing while the server is away: the redialling stops, nothing waits for the server.
    await stopServer();
    await pause(300);
    const started = Date.now();
    await reopened.close();
    assert.ok(Date.now() - started < 1_000, `closed in ${Date.now() - started} ms`);
  }
  assert.deepEqual(seqs, [1, 2, 3]);
});
