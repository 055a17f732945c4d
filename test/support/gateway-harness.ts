import { HttpClient } from '../../sdk/http-client.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import { loadAdminToken, registerAdminRoutes } from '../../src/api/admin.ts';
import type { KeyStore } from '../../src/api/auth/key-store.ts';
import { openKeyStore } from '../../src/api/auth/open-key-store.ts';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from '../../src/api/bootstrap.ts';
import { createGateway, type Gateway } from '../../src/api/gateway.ts';
import type { CommandPort, EventPort, HistoryPort, ReadPort } from '../../src/api/ports.ts';
import { type Clock, SystemClock } from '../../src/app/clock.ts';
import type { DeepPartial } from '../../src/app/config.ts';
import { type Config, loadConfig } from '../../src/app/config.ts';
import { FakeVenue } from './fake-venue.ts';
import { tempDir } from './temp-dir.ts';

/** The four ports the gateway runs on. */
export interface VenuePorts extends CommandPort, EventPort {
  readonly reads?: ReadPort;
  readonly history: HistoryPort;
}

export interface Harness {
  readonly gateway: Gateway;
  readonly baseUrl: string;
  readonly wsUrl: string;
  readonly credentials: DemoCredential[];
  readonly dataDir: string;
  readonly keyStore: KeyStore;
  http(index?: number, now?: () => number): HttpClient;
  ws(index?: number): WsClient;
  close(): Promise<void>;
}

export async function startHarness(
  options: { venue?: VenuePorts; config?: DeepPartial<Config>; clock?: Clock; fileKeyStore?: boolean } = {},
): Promise<Harness> {
  const venue: VenuePorts = options.venue ?? new FakeVenue();
  const dataDir = tempDir('gateway-');
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'silent',
      dataDir,
      ...options.config,
    } as DeepPartial<Config>,
  });
  const keyStore = options.fileKeyStore
    ? openKeyStore(config)
    : new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
  const credentials = (await bootstrapDemo({ keyStore, commands: venue, dataDir }))!;
  const reads = venue.reads ?? (venue as unknown as ReadPort);
  const gateway = createGateway({
    config,
    commands: venue,
    reads,
    history: venue.history,
    events: venue,
    keyStore,
    clock: options.clock ?? new SystemClock(),
  });
  registerAdminRoutes(gateway, { commands: venue, reads, keyStore, adminToken: loadAdminToken(dataDir) });
  const { port } = await gateway.listen();
  const baseUrl = `http://127.0.0.1:${port}`;
  const wsUrl = `ws://127.0.0.1:${port}/ws`;
  const clients: WsClient[] = [];
  return {
    gateway,
    baseUrl,
    wsUrl,
    credentials,
    dataDir,
    keyStore,
    http(index = 0, now = () => venue.now()) {
      const credential = credentials[index]!;
      return new HttpClient({
        baseUrl,
        credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
        now,
      });
    },
    ws(index = 0) {
      const credential = credentials[index]!;
      const client = new WsClient({
        url: wsUrl,
        credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
        now: () => venue.now(),
        reconnectDelayMs: 50,
      });
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((client) => client.close()));
      await gateway.close();
      keyStore.close();
    },
  };
}
