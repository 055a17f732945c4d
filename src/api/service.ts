/**
 * What the composition root calls to run the gateway: opens the key store under DATA_DIR,
 * bootstraps the demo users on first start (opening and funding their engine accounts through
 * the command port), opens any key-store account the engine lacks, builds the gateway with its
 * admin endpoints, and returns it ready for other parts to register methods, channels and flat
 * routes before `start()`.
 *
 * Call order in main.ts: recover the core → `await createGatewayService(...)` → register RFQ /
 * portfolio methods, channels and routes on `service.gateway` → `await service.start()`.
 * Shutdown: `await service.stop()` (stops HTTP/WS, closes the key store), then drain the
 * sequencer and close storage.
 */
import type { Clock } from '../app/clock.ts';
import type { Config } from '../app/config.ts';
import { loadAdminToken, provisionMissingAccounts, registerAdminRoutes } from './admin.ts';
import type { KeyStore } from './auth/key-store.ts';
import { openKeyStore } from './auth/open-key-store.ts';
import { bootstrapDemo, type DemoCredential } from './bootstrap.ts';
import { createGateway, type Gateway } from './gateway.ts';
import type { CommandPort, EventPort, HistoryPort, ReadPort } from './ports.ts';

export interface GatewayServiceOptions {
  readonly config: Readonly<Config>;
  readonly commands: CommandPort;
  readonly reads: ReadPort;
  readonly history: HistoryPort;
  readonly events: EventPort;
  readonly clock: Clock;
  /** Defaults to the SQLite store under DATA_DIR. */
  readonly keyStore?: KeyStore;
}

export interface GatewayService {
  readonly gateway: Gateway;
  readonly keyStore: KeyStore;
  /** The demo credentials when this start created them, else null. */
  readonly demoCredentials: DemoCredential[] | null;
  start(): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

export async function createGatewayService(options: GatewayServiceOptions): Promise<GatewayService> {
  const { config, commands, reads, history, events, clock } = options;
  const keyStore = options.keyStore ?? openKeyStore(config);
  const demoCredentials = await bootstrapDemo({ keyStore, commands, reads, dataDir: config.dataDir });
  await provisionMissingAccounts(keyStore, commands, reads);
  const gateway = createGateway({ config, commands, reads, history, events, keyStore, clock });
  registerAdminRoutes(gateway, { commands, reads, keyStore, adminToken: loadAdminToken(config.dataDir) });
  return {
    gateway,
    keyStore,
    demoCredentials,
    start: () => gateway.listen(),
    async stop() {
      await gateway.close();
      keyStore.close();
    },
  };
}
