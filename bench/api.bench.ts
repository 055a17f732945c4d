/**
 * `npm run bench:api`: starts the service in a child process (bench/api-server.ts, journal on)
 * and drives it from this process: non-crossing immediate-or-cancel orders (each one a full
 * place_order through auth, validation, sequencer, journal and engine), over HTTP keep-alive
 * (signed requests, C concurrent connections) and over WebSocket (authenticated sessions with a
 * window of W requests in flight). Prints orders/s and latency p50/p99 per transport.
 *
 * Env: BENCH_SERVER (api-server.ts | api-server-memory.ts), BENCH_SECONDS (default 5 per transport), BENCH_HTTP_CONNECTIONS (32), BENCH_WS_SESSIONS (4),
 * BENCH_WS_WINDOW (256), BENCH_TRANSPORTS (http,ws), BENCH_SIMULATOR (off; on runs the liquidity simulator
 * in the server as `npm start` does), BENCH_PROF (server CPU profile into /tmp/prof), BENCH_NODE_FLAGS
 * (node flags for the server; default: those of `npm start`), BENCH_RATES (offered rates for
 * the open-loop WebSocket latency runs, default `1000,5000`; empty or 0 skips them; with no saturation phase
 * before them a 3 s warm-up at the first rate runs unmeasured), BENCH_CEILING
 * (on: then the same phases against bench/api-ceiling-server.ts, the transports with no service
 * behind them, for the machine's own bound in the same run), BENCH_HEAP_PROF (a file: the server's
 * sampled allocations, garbage included, written at exit), BENCH_MARKET_TICK_MS (the server's
 * market tick, default 1000 as `npm start`; a large value stops the ticks after start),
 * BENCH_HISTORY (on: during each open-loop run, the trading account reads its order history over
 * HTTP every 20 ms; other: an account that does not trade does; prints those reads' latency),
 * BENCH_SNAPSHOT_REPLICA (off: the server runs without the replica, so the read store is written
 * inline, as `SNAPSHOT_REPLICA=off`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { signHttp, signWs } from '../src/api/auth/signature.ts';
import { SERVICE_NODE_FLAGS } from './bench-config.ts';
import { percentile, processCpuSeconds } from './measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const HTTP_CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 32);
const WS_SESSIONS = Number(process.env.BENCH_WS_SESSIONS ?? 4);
const WS_WINDOW = Number(process.env.BENCH_WS_WINDOW ?? 256);
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'http,ws').split(',');
const RATES = (process.env.BENCH_RATES ?? '1000,5000')
  .split(',')
  .filter((rate) => rate !== '' && rate !== '0')
  .map(Number);
/** on: the trading account reads its history; other: an account that does not trade does. */
const HISTORY = process.env.BENCH_HISTORY ?? 'off';
const HISTORY_INTERVAL_MS = 20;
const WARM_UP_SECONDS = 3;
const READ_STORE_WAIT_MS = 60_000;
const INSTRUMENT = 'BTC-PERPETUAL';

interface Credential {
  apiKey: string;
  apiSecret: string;
}

let serverPid = 0;
/** Prefixes the figures of the ceiling run. */
let label = '';

/** Measures one transport run: throughput, latency and the CPU both processes spent per order. */
async function measured(
  name: string,
  run: () => Promise<{ latencies: number[]; errors: number }>,
  extraPercentiles: readonly number[] = [],
): Promise<void> {
  const serverCpu = processCpuSeconds(serverPid);
  const serverMainCpu = processCpuSeconds(serverPid, true);
  const clientCpu = process.cpuUsage();
  const started = performance.now();
  const { latencies, errors } = await run();
  const elapsedMs = performance.now() - started;
  const serverUs = ((processCpuSeconds(serverPid) - serverCpu) * 1e6) / latencies.length;
  const serverMainUs = ((processCpuSeconds(serverPid, true) - serverMainCpu) * 1e6) / latencies.length;
  const client = process.cpuUsage(clientCpu);
  const clientUs = (client.user + client.system) / latencies.length;
  const sorted = Float64Array.from(latencies).sort();
  const rate = (latencies.length / elapsedMs) * 1000;
  console.log(
    `${(label + name).padEnd(36)} ${Math.round(rate).toString().padStart(8)} orders/s   p50 ${percentile(sorted, 50).toFixed(2)} ms   p99 ${percentile(sorted, 99).toFixed(2)} ms${extraPercentiles.map((p) => `   p${p} ${percentile(sorted, p).toFixed(2)} ms`).join('')}   errors ${errors}   server ${serverUs.toFixed(0)} µs CPU/order (event loop ${serverMainUs.toFixed(0)})   client ${clientUs.toFixed(0)} µs CPU/order`,
  );
  if (errors > 0) {
    // Every order of these phases is valid: an error means the bench (or the service) is broken,
    // and the figures above measure error answers, not orders.
    console.log(`    ${errors} requests were answered with an error: these figures do not measure orders`);
    process.exitCode = 1;
  }
  await serverStalls();
}

/**
 * Waits until the read store has caught up with the journal (`venue_read_store_lag_commands` 0 on
 * `/metrics`), so an open-loop run does not measure the backlog a saturation phase left behind;
 * prints how long that took. Servers without the metric (the ceiling) return at once.
 */
async function readStoreCaughtUp(port: number): Promise<void> {
  const started = performance.now();
  for (;;) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const lag = /^venue_read_store_lag_commands (\d+)/m.exec(text)?.[1];
    if (lag === undefined) return;
    if (Number(lag) === 0) break;
    if (performance.now() - started > READ_STORE_WAIT_MS) {
      console.log(`    the read store is still ${lag} commands behind after ${READ_STORE_WAIT_MS / 1000} s`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const waited = performance.now() - started;
  if (waited < 150) return;
  // The server's figures of the catch-up go under this line, not into the next phase's.
  console.log(`read store caught up ${(waited / 1000).toFixed(1)} s after the phase before; meanwhile:`);
  await serverStalls();
}

/** Asks the server for its event-loop and GC figures of the phase just measured (it prints them). */
async function serverStalls(): Promise<void> {
  if (serverPid === 0) return;
  process.kill(serverPid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 200));
}

function orderParams(i: number) {
  // Far from any liquidity and immediate-or-cancel: never rests, never trades.
  return i % 2 === 0
    ? { instrumentName: INSTRUMENT, quantity: '10', price: '30000', timeInForce: 'immediate_or_cancel' }
    : { instrumentName: INSTRUMENT, quantity: '10', price: '90000', timeInForce: 'immediate_or_cancel' };
}

async function benchHttp(port: number, credential: Credential, serverTime: () => number) {
  await measured(`HTTP keep-alive (${HTTP_CONNECTIONS} conns)`, () => runHttp(port, credential, serverTime));
}

/**
 * One keep-alive HTTP/1.1 connection with one request in flight at a time, over a raw socket:
 * node's http client costs ~200 µs of CPU per request, which on 2 shared cores would measure the
 * client rather than the server. Answers are framed by Content-Length (Fastify always sends it).
 */
function httpConnection(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
  let buffer: Buffer = Buffer.alloc(0);
  let waiting: ((answer: { status: number; body: Buffer }) => void) | null = null;
  let failed: ((error: Error) => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    const headerEnd = buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const head = buffer.toString('latin1', 0, headerEnd);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (buffer.length < headerEnd + 4 + length) return;
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length);
    buffer = buffer.subarray(headerEnd + 4 + length);
    const resolve = waiting;
    waiting = null;
    resolve?.({ status: Number(head.slice(9, 12)), body });
  });
  socket.on('error', (error) => failed?.(error));
  const ready = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    ready,
    request(text: string): Promise<{ status: number; body: Buffer }> {
      return new Promise((resolve, reject) => {
        waiting = resolve;
        failed = reject;
        socket.write(text);
      });
    },
    close: () => socket.destroy(),
  };
}

/** The text of one signed `POST /api/<method>` envelope request. */
function signedRequest(
  port: number,
  credential: Credential,
  serverTime: () => number,
  rid: number,
  method: string,
  params: unknown,
): string {
  const body = JSON.stringify({ rid, method, params });
  const ts = String(serverTime());
  const nonce = randomUUID();
  const path = `/api/${method}`;
  const signature = signHttp(credential.apiSecret, ts, nonce, 'POST', path, body);
  return (
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `authorization: Bearer ${credential.apiKey}\r\nservice-api-timestamp: ${ts}\r\n` +
    `service-api-nonce: ${nonce}\r\nservice-api-signature: ${signature}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/**
 * History reads while orders flow: one `get_order_history_by_currency` at a time, every
 * HISTORY_INTERVAL_MS, by the account placing the orders (each read waits until the read store
 * holds that account's acknowledged orders) or by another (BENCH_HISTORY=other). Returns a stop
 * function that prints their latency.
 */
function readHistoryMeanwhile(port: number, credential: Credential, serverTime: () => number) {
  const latencies: number[] = [];
  let errors = 0;
  let running = true;
  const connection = httpConnection(port);
  const done = (async () => {
    await connection.ready;
    for (let rid = 1; running; rid++) {
      const text = signedRequest(port, credential, serverTime, rid, 'private/get_order_history_by_currency', {
        currency: 'BTC',
        includeUnfilled: true,
      });
      const started = performance.now();
      const answer = await connection.request(text);
      latencies.push(performance.now() - started);
      if (answer.status !== 200 || answer.body.includes('"error"')) errors++;
      await new Promise((resolve) => setTimeout(resolve, HISTORY_INTERVAL_MS));
    }
    connection.close();
  })();
  return async () => {
    running = false;
    await done;
    const sorted = Float64Array.from(latencies).sort();
    console.log(
      `    history reads meanwhile (one every ${HISTORY_INTERVAL_MS} ms): p50 ${percentile(sorted, 50).toFixed(2)} ms   p99 ${percentile(sorted, 99).toFixed(2)} ms   max ${(sorted.at(-1) ?? 0).toFixed(2)} ms   (${sorted.length}, errors ${errors})`,
    );
  };
}

async function runHttp(port: number, credential: Credential, serverTime: () => number) {
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const connections = Array.from({ length: HTTP_CONNECTIONS }, () => httpConnection(port));
  await Promise.all(connections.map((c) => c.ready));
  await Promise.all(
    connections.map(async (connection) => {
      while (performance.now() < deadline) {
        const n = i++;
        const method = n % 2 === 0 ? 'private/buy' : 'private/sell';
        const text = signedRequest(port, credential, serverTime, n, method, orderParams(n));
        const started = performance.now();
        try {
          const answer = await connection.request(text);
          latencies.push(performance.now() - started);
          if (answer.status !== 200 || answer.body.includes('"error"')) errors++;
        } catch {
          errors++;
          break;
        }
      }
    }),
  );
  for (const connection of connections) connection.close();
  return { latencies, errors };
}

async function wsSession(port: number, credential: Credential, serverTime: () => number, deadline: number) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  await new Promise((resolve, reject) => {
    socket.on('open', resolve);
    socket.on('error', reject);
  });
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let errors = 0;
  let rid = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const send = () => {
    const n = ++rid;
    sentAt.set(n, performance.now());
    socket.send(
      JSON.stringify({
        rid: n,
        method: n % 2 === 0 ? 'private/buy' : 'private/sell',
        params: orderParams(n),
      }),
    );
  };
  let authed = false;
  socket.on('message', (data) => {
    const text = data.toString();
    const ridMatch = /"rid":(\d+)/.exec(text);
    if (!authed) {
      authed = true;
      if (text.includes('"error"')) throw new Error(`ws auth failed: ${text}`);
      for (let k = 0; k < WS_WINDOW; k++) send();
      return;
    }
    if (ridMatch === null) return;
    const n = Number(ridMatch[1]);
    latencies.push(performance.now() - sentAt.get(n)!);
    sentAt.delete(n);
    if (text.includes('"error"')) errors++;
    if (performance.now() < deadline) send();
    else if (sentAt.size === 0) done();
  });
  const ts = serverTime();
  const nonce = randomUUID();
  socket.send(
    JSON.stringify({
      rid: 0,
      method: 'public/auth',
      params: {
        apiKey: credential.apiKey,
        timestamp: ts,
        nonce,
        signature: signWs(credential.apiSecret, String(ts), nonce),
      },
    }),
  );
  await finished;
  socket.close();
  return { latencies, errors };
}

async function benchWs(port: number, credentials: Credential[], serverTime: () => number) {
  await measured(`WebSocket (${WS_SESSIONS} sessions × ${WS_WINDOW})`, async () => {
    const deadline = performance.now() + SECONDS * 1000;
    const results = await Promise.all(
      Array.from({ length: WS_SESSIONS }, (_, k) =>
        wsSession(port, credentials[k % credentials.length]!, serverTime, deadline),
      ),
    );
    return {
      latencies: results.flatMap((r) => r.latencies),
      errors: results.reduce((sum, r) => sum + r.errors, 0),
    };
  });
}

/**
 * Open loop at a fixed offered rate: orders leave on a schedule whatever the answers do (a server
 * stall cannot slow the sender down and hide itself: no coordinated omission). Latency runs from
 * the moment an order is written to the socket to its answer.
 */
async function wsAtRate(
  port: number,
  credential: Credential,
  serverTime: () => number,
  rate: number,
  seconds = SECONDS,
) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  await new Promise((resolve, reject) => {
    socket.on('open', resolve);
    socket.on('error', reject);
  });
  const scheduledAt = new Map<number, number>();
  const latencies: number[] = [];
  let errors = 0;
  let authed: () => void = () => {};
  const authenticated = new Promise<void>((resolve) => {
    authed = resolve;
  });
  let finished: () => void = () => {};
  const allAnswered = new Promise<void>((resolve) => {
    finished = resolve;
  });
  let sending = true;
  socket.on('message', (data) => {
    const text = data.toString();
    const n = Number(/"rid":(\d+)/.exec(text)?.[1] ?? -1);
    if (n === 0) {
      if (text.includes('"error"')) throw new Error(`ws auth failed: ${text}`);
      authed();
      return;
    }
    const at = scheduledAt.get(n);
    if (at === undefined) return;
    latencies.push(performance.now() - at);
    scheduledAt.delete(n);
    if (text.includes('"error"')) errors++;
    if (!sending && scheduledAt.size === 0) finished();
  });
  const ts = serverTime();
  const nonce = randomUUID();
  socket.send(
    JSON.stringify({
      rid: 0,
      method: 'public/auth',
      params: {
        apiKey: credential.apiKey,
        timestamp: ts,
        nonce,
        signature: signWs(credential.apiSecret, String(ts), nonce),
      },
    }),
  );
  await authenticated;
  const started = performance.now();
  const total = Math.round(rate * seconds);
  let sent = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      for (; sent < due; sent++) {
        const n = sent + 1;
        scheduledAt.set(n, performance.now());
        socket.send(
          JSON.stringify({
            rid: n,
            method: n % 2 === 0 ? 'private/buy' : 'private/sell',
            params: orderParams(n),
          }),
        );
      }
      if (sent >= total) resolve();
      else setTimeout(pump, 1);
    };
    pump();
  });
  sending = false;
  if (scheduledAt.size > 0) await allAnswered;
  socket.close();
  return { latencies, errors };
}

/** Starts one server script, runs the selected phases against it, stops it. */
async function runAgainst(serverScript: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
      ...(process.env.BENCH_NODE_FLAGS ?? SERVICE_NODE_FLAGS).split(' ').filter((flag) => flag !== ''),
      '--import',
      'tsx',
      join(import.meta.dirname, serverScript),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // The server's announcement: the first stdout line with its dataDir. Its other stdout lines (log
  // lines, V8 traces asked for in BENCH_NODE_FLAGS) go to stderr.
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"dataDir"')) resolve(line);
      else process.stderr.write(`${line}\n`);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const { port, dataDir, journal, ceiling } = JSON.parse(firstLine) as {
    port: number;
    dataDir: string;
    journal?: boolean;
    ceiling?: boolean;
  };
  try {
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credential[];
    const time = await fetch(`http://127.0.0.1:${port}/api/public/time`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rid: 1, method: 'public/time', params: {} }),
    });
    const offset = ((await time.json()) as { result: number }).result - Date.now();
    const serverTime = () => Date.now() + offset;
    serverPid = child.pid ?? 0;
    console.log(
      `${serverScript}: ${SECONDS}s per transport, ${ceiling === true ? 'no service behind the transports' : `journal ${journal === false ? 'off' : 'on'}`}, server pid ${child.pid}`,
    );
    if (TRANSPORTS.includes('http')) await benchHttp(port, credentials[0]!, serverTime);
    if (TRANSPORTS.includes('ws')) await benchWs(port, credentials, serverTime);
    if (RATES.length > 0 && !TRANSPORTS.includes('http') && !TRANSPORTS.includes('ws')) {
      // A fresh server compiles its hot paths during its first thousands of orders: without a
      // saturation phase before, the first open-loop run would measure the JIT, not the service.
      console.log(`warm-up: ${WARM_UP_SECONDS} s at ${RATES[0]}/s, not measured`);
      await wsAtRate(port, credentials[0]!, serverTime, RATES[0]!, WARM_UP_SECONDS);
      await serverStalls();
    }
    for (const rate of RATES) {
      await readStoreCaughtUp(port);
      const reader = HISTORY === 'other' ? credentials[1]! : credentials[0]!;
      const history =
        HISTORY !== 'off' && ceiling !== true ? readHistoryMeanwhile(port, reader, serverTime) : null;
      await measured(
        `WebSocket open loop ${rate}/s`,
        () => wsAtRate(port, credentials[0]!, serverTime, rate),
        [99.9],
      );
      await history?.();
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

await runAgainst(process.env.BENCH_SERVER ?? 'api-server.ts');
if (process.env.BENCH_CEILING === 'on') {
  label = 'ceiling ';
  await runAgainst('api-ceiling-server.ts');
}
