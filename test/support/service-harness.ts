/**
 * Starts the whole service in-process (real storage in a temp dir, engine, sub-machines, market,
 * gateway on a free port) on a virtual clock, and hands out sdk clients for the demo keys.
 * `restart()` closes it gracefully and starts it again on the same data directory.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { HttpClient } from '../../sdk/http-client.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import type { DemoCredential } from '../../src/api/bootstrap.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { type Config, type DeepPartial, loadConfig } from '../../src/app/config.ts';
import type { RestartPolicy } from '../../src/app/replica-supervisor.ts';
import { type RunningService, startService } from '../../src/app/service.ts';
import type { SnapshotPolicy } from '../../src/store/snapshotter.ts';
import { tempDir } from './temp-dir.ts';

export const SERVICE_T0 = Date.UTC(2026, 10, 20, 12);

export interface TestService {
  readonly service: RunningService;
  readonly clock: VirtualClock;
  readonly dataDir: string;
  readonly credentials: DemoCredential[];
  readonly baseUrl: string;
  readonly wsUrl: string;
  http(index?: number): HttpClient;
  ws(index?: number): WsClient;
  restart(): Promise<TestService>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  readonly dataDir?: string;
  readonly clock?: VirtualClock;
  readonly config?: DeepPartial<Config>;
  readonly snapshotPolicy?: SnapshotPolicy;
  readonly replicaRestart?: RestartPolicy;
  /** Where the service logs (default: nowhere). */
  readonly logger?: Logger;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDir('service-');
  const clock = options.clock ?? new VirtualClock(SERVICE_T0);
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      dataDir,
      rateLimits: { enabled: false },
      ...options.config,
    } as DeepPartial<Config>,
  });
  const service = await startService({
    config,
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    ...(options.snapshotPolicy === undefined ? {} : { snapshotPolicy: options.snapshotPolicy }),
    ...(options.replicaRestart === undefined ? {} : { replicaRestart: options.replicaRestart }),
  });
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as DemoCredential[];
  const baseUrl = `http://127.0.0.1:${service.address.port}`;
  const wsUrl = `ws://127.0.0.1:${service.address.port}/ws`;
  const sockets: WsClient[] = [];
  const now = () => service.core.now();
  const credentialsOf = (index: number) => {
    const credential = credentials[index];
    if (credential === undefined) throw new Error(`no demo credential ${index}`);
    return { apiKey: credential.apiKey, apiSecret: credential.apiSecret };
  };
  const close = async () => {
    for (const socket of sockets) socket.close();
    await service.close();
  };
  return {
    service,
    clock,
    dataDir,
    credentials,
    baseUrl,
    wsUrl,
    http: (index = 0) => new HttpClient({ baseUrl, credentials: credentialsOf(index), now }),
    ws: (index = 0) => {
      const socket = new WsClient({
        url: wsUrl,
        credentials: credentialsOf(index),
        now,
        reconnectDelayMs: 50,
      });
      sockets.push(socket);
      return socket;
    },
    restart: async () => {
      await close();
      return startTestService({ ...options, dataDir, clock });
    },
    close,
  };
}

/** A post-only buy of 10 BTC-PERPETUAL by the first demo key at `price` (rests below the market). */
export async function restingBuy(running: TestService, price: string, label: string): Promise<string> {
  const placed = await running.http(0).call('private/buy', {
    instrumentName: 'BTC-PERPETUAL',
    quantity: '10',
    price,
    postOnly: true,
    label,
  });
  return placed.order.orderId;
}
