/**
 * The ceiling for `npm run bench:api` (BENCH_CEILING=on): the same transports with no service
 * behind them. Fastify answers `POST /api/*` and `ws` answers every `/ws` message at once with a
 * canned envelope of an order answer's size; no auth, validation, engine or journal. Driven by the
 * same clients in the same run, it shows what this machine allows before any work is done.
 * Prints `{"port", "dataDir", "ceiling"}` (dataDir holds a credentials.json the bench client reads).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';
import { throwawayDataDir } from './bench-config.ts';

const dataDir = throwawayDataDir('bench-ceiling-');
writeFileSync(
  join(dataDir, 'credentials.json'),
  JSON.stringify([{ apiKey: 'ceiling', apiSecret: 'ceiling' }]),
);
const result = {
  order: {
    orderId: '1000001',
    orderState: 'cancelled',
    instrumentName: 'BTC-PERPETUAL',
    direction: 'buy',
    price: '30000',
    amount: '10',
    filledAmount: '0',
    averagePrice: '0',
    timeInForce: 'immediate_or_cancel',
    creationTimestamp: 0,
    lastUpdateTimestamp: 0,
  },
  trades: [],
};
const ridOf = (text: string) => Number(/"rid":(\d+)/.exec(text)?.[1] ?? 0);

const app = Fastify({ logger: { level: 'warn' } });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
app.post('/api/*', async (request, reply) =>
  reply
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify({ rid: ridOf(request.body as string), result })),
);
app.post('/api/public/time', async () => ({ rid: 1, result: Date.now() }));
const sockets = new WebSocketServer({ noServer: true });
app.server.on('upgrade', (request, socket, head) =>
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('message', (data) => ws.send(JSON.stringify({ rid: ridOf(data.toString()), result })));
  }),
);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address() as { port: number };
console.log(JSON.stringify({ port: address.port, dataDir, ceiling: true }));
process.on('SIGUSR2', () => {});
process.on('SIGTERM', () => process.exit(0));
