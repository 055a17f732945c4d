/**
 * The sdk's HTTP client when an answer is lost: a proxy between client and service forwards the
 * request and then drops the connection instead of the answer. The service has executed the
 * order; the client sends the same signed bytes again and gets the original answer, and the
 * order exists once. And after a crash, when the service refuses requests signed before a time
 * it names: a call refused on its first sending is signed again past that time; a resend refused
 * so (it may have run) is not.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { startCore, startPortfolioHarness } from '../support/portfolio-harness.ts';

const PERP = 'BTC-PERPETUAL';

/** Forwards TCP to `port`; while `dropAnswers` > 0, a connection whose answer arrives is cut instead. */
class LossyProxy {
  dropAnswers = 0;
  /** An HTTP answer to send for the next request instead of forwarding it (then null). */
  fabricate: string | null = null;
  /** Becomes `fabricate` once an answer has been dropped. */
  fabricateAfterDrop: string | null = null;
  /** Requests forwarded (first bytes of each upstream write that start a request line). */
  readonly requests: string[] = [];
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(upstreamPort: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(upstreamPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        if (/^(GET|POST) /.test(text)) this.requests.push(text.slice(0, text.indexOf('\r\n')));
        if (this.fabricate !== null) {
          client.write(this.fabricate);
          this.fabricate = null;
          return;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (this.dropAnswers > 0) {
          this.dropAnswers--;
          this.fabricate = this.fabricateAfterDrop;
          this.fabricateAfterDrop = null;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port)),
    );
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let engine: EngineVenue;
let harness: Harness;
let proxy: LossyProxy;
let client: (retries?: number) => HttpClient;

before(async () => {
  engine = await startEngineVenue();
  harness = await startHarness({ venue: engine, clock: engine.clock });
  proxy = new LossyProxy(Number(new URL(harness.baseUrl).port));
  const port = await proxy.listen();
  const credential = harness.credentials[0]!;
  client = (retries) =>
    new HttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
      now: () => engine.now(),
      ...(retries === undefined ? {} : { retries }),
    });
});
after(async () => {
  await proxy.close();
  await harness.close();
});

const openWithLabel = (label: string) =>
  engine.reads.openOrders(harness.credentials[0]!.accountIds[0]!, {}).filter((o) => o.label === label);

test('an order whose answer was lost is sent again byte for byte: answered once, placed once', async () => {
  proxy.dropAnswers = 1;
  const before = proxy.requests.length;
  const { order } = await client().call('private/buy', {
    instrumentName: PERP,
    quantity: '10',
    price: '30000',
    label: 'lost-answer',
  });
  assert.equal(proxy.requests.length - before, 2, 'the request went twice');
  assert.deepEqual(
    openWithLabel('lost-answer').map((o) => o.orderId),
    [order.orderId],
  );
});

test('a portfolio submit resent byte for byte gets the first answer: same portfolioId, one portfolio', async () => {
  const core = await startCore();
  const portfolios = await startPortfolioHarness(core);
  try {
    const credential = portfolios.credentials[0]!;
    const accountId = credential.accountIds[0]!;
    const port = (portfolios.gateway.fastify.server.address() as AddressInfo).port;
    // A bounded wait: a resend whose answer is never kept would hang, and fails here instead.
    const sdk = new HttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
      now: () => core.ports.now(),
      timeoutMs: 3_000,
    });
    const body = JSON.stringify({
      accountId,
      portfolioType: 'TWAP',
      twapTrade: { durationSec: 60, frequencySec: 10 },
      legs: [
        {
          instrument: PERP,
          instrumentType: 'PERPETUAL',
          side: 1,
          quantity: '100',
          priceOptions: { priceType: 'LIMIT', price: 59000, priceIn: 'USD' },
        },
      ],
    });
    const request = sdk.sign('POST', '/tt/core-broker/openapi/portfolios/submit', body);
    const first = await sdk.send(request);
    const resent = await sdk.send(request);
    assert.equal(first.status, 200);
    const { succ, value } = first.body as { succ: boolean; value: { portfolioId: number } };
    assert.equal(succ, true, first.text);
    assert.equal(resent.status, first.status);
    assert.equal(resent.text, first.text, 'the same answer, byte for byte');
    assert.deepEqual(
      core.algos.portfoliosOf(accountId).map((p) => p.id),
      [value.portfolioId],
      'submitted once',
    );
  } finally {
    await portfolios.close();
  }
});

test('without resends the lost answer is the caller’s problem (and the order was placed)', async () => {
  proxy.dropAnswers = 1;
  await assert.rejects(
    client(0).call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '30000',
      label: 'no-resend',
    }),
    (error: Error) => error instanceof TypeError,
  );
  assert.equal(openWithLabel('no-resend').length, 1);
});

test('after a crash, a call refused as signed too early is signed again past the named time, once', async () => {
  const refusedUntil = engine.now() + 10_000;
  harness.gateway.authenticator.refuseSignedUntil(refusedUntil);
  try {
    const sdk = client();
    const before = proxy.requests.length;
    const { order } = await sdk.call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '30000',
      label: 'after-crash',
    });
    assert.equal(proxy.requests.length - before, 2, 'refused, then signed again');
    assert.deepEqual(
      openWithLabel('after-crash').map((o) => o.orderId),
      [order.orderId],
    );
    // The next call is signed past the refused time straight away.
    await sdk.call('private/get_open_orders', {});
    assert.equal(proxy.requests.length - before, 3);
  } finally {
    harness.gateway.authenticator.refuseSignedUntil(0);
  }
});

test('a resend refused as signed before a crash may have run: the refusal goes to the caller', async () => {
  const body = JSON.stringify({
    rid: 1,
    error: { code: 13503, message: 'service unavailable', data: { signedNotAfter: engine.now() + 10_000 } },
  });
  // The first sending is executed and its answer dropped; the resend meets a restarted service.
  proxy.dropAnswers = 1;
  proxy.fabricateAfterDrop = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const before = proxy.requests.length;
  const refused = client().call('private/buy', {
    instrumentName: PERP,
    quantity: '10',
    price: '30000',
    label: 'resend-refused',
  });
  await assert.rejects(refused, (error: unknown) => error instanceof ApiError && error.code === 13503);
  assert.equal(proxy.requests.length - before, 2, 'sent, resent, and not signed again');
  assert.equal(openWithLabel('resend-refused').length, 1);
});
