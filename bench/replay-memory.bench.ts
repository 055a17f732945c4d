/**
 * Heap held by the authenticator's replay memory: 100k signed requests remembered inside the
 * window, for private calls (answers kept) and signed public calls. Prints bytes per request.
 * Run: node --expose-gc --import tsx bench/replay-memory.bench.ts (env BENCH_REQUESTS, default 100000)
 */
import { randomUUID } from 'node:crypto';
import { Authenticator, type HttpRequestParts } from '../src/api/auth/authenticator.ts';
import { SecretBox } from '../src/api/auth/secret-box.ts';
import { signHttp } from '../src/api/auth/signature.ts';
import { SqliteKeyStore } from '../src/api/auth/sqlite-key-store.ts';
import { jsonBytes } from '../src/store/json-bytes.ts';

const COUNT = Number(process.env.BENCH_REQUESTS ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const store = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
const user = store.createUser('bench', 0);
store.createAccount(user.id, 'a', 0);
const key = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
const now = 1_700_000_000_000;

function requests(method: string): HttpRequestParts[] {
  const out: HttpRequestParts[] = [];
  for (let i = 0; i < COUNT; i += 1) {
    const ts = String(now);
    // A fresh UUID, as SEMANTICS requires (a flat string, as header values arrive).
    const nonce = randomUUID();
    const body = `{"rid":${i},"method":"${method}","params":{"instrumentName":"BTC-PERPETUAL","amount":"1"}}`;
    const path = `/api/${method}`;
    out.push({
      authorization: `Bearer ${key.record.apiKey}`,
      timestamp: ts,
      nonce,
      signature: signHttp(key.apiSecret, ts, nonce, 'POST', path, body),
      method: 'POST',
      pathWithQuery: path,
      body,
    });
  }
  return out;
}

function answerFor(i: number): Buffer {
  // A typical private answer (~400 bytes), unique per request as real answers are, kept as the
  // HTTP route keeps it: the bytes sent.
  return jsonBytes({
    rid: i,
    result: {
      order: {
        orderId: `ord-${i}-${'x'.repeat(8)}`,
        instrumentName: 'BTC-PERPETUAL',
        direction: 'buy',
        price: '65000.5',
        amount: '1',
        filledAmount: '0',
        orderState: 'open',
        orderType: 'limit',
        timeInForce: 'good_til_cancelled',
        creationTimestamp: now,
        lastUpdateTimestamp: now,
        label: '',
        postOnly: false,
        reduceOnly: false,
      },
      trades: [],
    },
  });
}

function measure(label: string, method: string): void {
  let auth: Authenticator | null = new Authenticator(store, () => now, { clockSkewMs: 15_000 });
  const keep = method.startsWith('private/');
  let batch: HttpRequestParts[] | null = requests(method);
  let answers: Buffer[] | null = batch.map((_, i) => answerFor(i));
  const authenticate = auth.authenticateHttp.bind(auth) as (
    request: HttpRequestParts,
    retention?: string,
  ) => ReturnType<Authenticator['authenticateHttp']>;
  for (let i = 0; i < COUNT; i += 1) {
    // A real route keeps answers only for non-public methods; an API without the hint ignores it.
    const outcome = authenticate(batch[i]!, keep ? 'answer' : 'fingerprint');
    if (outcome.kind === 'fresh') outcome.settle({ status: 200, body: answers[i]! });
  }
  batch = null;
  answers = null;
  const remembered = auth.rememberedNonces;
  gc!();
  gc!();
  const held = () => {
    const usage = process.memoryUsage();
    return { heap: usage.heapUsed, buffers: usage.arrayBuffers };
  };
  const withMemory = held();
  auth = null;
  gc!();
  gc!();
  const without = held();
  const perRequest = (bytes: number) => Math.round(bytes / COUNT);
  console.log(
    `${label}: ${remembered} remembered, ${perRequest(withMemory.heap - without.heap)} bytes/request of heap and ${perRequest(withMemory.buffers - without.buffers)} of buffers held (answer ${answerFor(0).length} bytes, UUID nonce)`,
  );
}

measure('private (answer kept)', 'private/buy');
measure('signed public (fingerprint)', 'public/ticker');
