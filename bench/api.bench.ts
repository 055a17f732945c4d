/**
 * `npm run bench:api`: starts the service in a child process (bench/api-server.ts, journal on)
 * and drives it from this process: non-crossing immediate-or-cancel orders (each one a full
 * place_order through auth, validation, sequencer, journal and engine), over HTTP keep-alive
 * (signed requests, C concurrent connections) and over WebSocket (authenticated sessions with a
 * window of W requests in flight). Prints orders/s and latency p50/p99 per transport.
 *
 * Env: BENCH_SERVER (api-server.ts | api-server-memory.ts), BENCH_SECONDS (default 5 per transport), BENCH_HTTP_CONNECTIONS (32), BENCH_WS_SESSIONS (4),
 * BENCH_WS_WINDOW (256).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { signHttp, signWs } from '../src/api/auth/signature.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const HTTP_CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 32);
const WS_SESSIONS = Number(process.env.BENCH_WS_SESSIONS ?? 4);
const WS_WINDOW = Number(process.env.BENCH_WS_WINDOW ?? 256);
const INSTRUMENT = 'BTC-PERPETUAL';

interface Credential {
  apiKey: string;
  apiSecret: string;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function report(name: string, latencies: number[], errors: number, elapsedMs: number): void {
  const sorted = Float64Array.from(latencies).sort();
  const rate = (latencies.length / elapsedMs) * 1000;
  console.log(
    `${name.padEnd(28)} ${Math.round(rate).toString().padStart(8)} orders/s   p50 ${percentile(sorted, 50).toFixed(2)} ms   p99 ${percentile(sorted, 99).toFixed(2)} ms   errors ${errors}`,
  );
}

function orderParams(i: number) {
  // Far from any liquidity and immediate-or-cancel: never rests, never trades.
  return i % 2 === 0
    ? { instrumentName: INSTRUMENT, quantity: '10', price: '30000', timeInForce: 'immediate_or_cancel' }
    : { instrumentName: INSTRUMENT, quantity: '10', price: '90000', timeInForce: 'immediate_or_cancel' };
}

async function benchHttp(port: number, credential: Credential, serverTime: () => number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: HTTP_CONNECTIONS });
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const n = i++;
      const method = n % 2 === 0 ? 'private/buy' : 'private/sell';
      const body = JSON.stringify({ rid: n, method, params: orderParams(n) });
      const ts = String(serverTime());
      const nonce = randomUUID();
      const path = `/api/${method}`;
      const started = performance.now();
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${credential.apiKey}`,
            'service-api-timestamp': ts,
            'service-api-nonce': nonce,
            'service-api-signature': signHttp(credential.apiSecret, ts, nonce, 'POST', path, body),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            latencies.push(performance.now() - started);
            if (response.statusCode !== 200 || Buffer.concat(chunks).includes('"error"')) errors++;
            resolve();
          });
        },
      );
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: HTTP_CONNECTIONS }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  agent.destroy();
  report(`HTTP keep-alive (${HTTP_CONNECTIONS} conns)`, latencies, errors, performance.now() - started);
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
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const results = await Promise.all(
    Array.from({ length: WS_SESSIONS }, (_, k) =>
      wsSession(port, credentials[k % credentials.length]!, serverTime, deadline),
    ),
  );
  report(
    `WebSocket (${WS_SESSIONS} sessions × ${WS_WINDOW})`,
    results.flatMap((r) => r.latencies),
    results.reduce((sum, r) => sum + r.errors, 0),
    performance.now() - started,
  );
}

async function main(): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
      '--import',
      'tsx',
      join(import.meta.dirname, process.env.BENCH_SERVER ?? 'api-server.ts'),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const { port, dataDir, journal } = JSON.parse(firstLine) as {
    port: number;
    dataDir: string;
    journal?: boolean;
  };
  try {
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credential[];
    const time = await fetch(`http://127.0.0.1:${port}/api/public/time`, {
      method: 'POST',
      body: JSON.stringify({ rid: 1, method: 'public/time', params: {} }),
    });
    const offset = ((await time.json()) as { result: number }).result - Date.now();
    const serverTime = () => Date.now() + offset;
    console.log(
      `api bench: ${SECONDS}s per transport, journal ${journal === false ? 'off' : 'on'}, server pid ${child.pid}`,
    );
    await benchHttp(port, credentials[0]!, serverTime);
    await benchWs(port, credentials, serverTime);
  } finally {
    child.kill('SIGTERM');
  }
}

await main();
