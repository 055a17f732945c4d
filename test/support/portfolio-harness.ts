/**
 * The portfolio e2e harness: the real engine and algorithm layer inside the core machine, the
 * real sequencer on a virtual clock, the real gateway with the flat portfolio routes and
 * channels, driven through the sdk. Timers are submitted when the machine asks for a wakeup, as
 * the core service does (`advance`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpClient } from '../../sdk/http-client.ts';
import type { SubmitPortfolioBody } from '../../sdk/types.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import { PortfolioMachine } from '../../src/algo/machine.ts';
import { venueMarketView } from '../../src/algo/venue-market-view.ts';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from '../../src/api/bootstrap.ts';
import { createGateway, type Gateway } from '../../src/api/gateway.ts';
import { registerPortfolioChannels } from '../../src/api/portfolios/channels.ts';
import { registerPortfolioRoutes } from '../../src/api/portfolios/routes.ts';
import type { ComboPort } from '../../src/api/ports.ts';
import { SystemClock, VirtualClock } from '../../src/app/clock.ts';
import { type Config, type DeepPartial, loadConfig } from '../../src/app/config.ts';
import { CoreMachine } from '../../src/core/machine.ts';
import { VenueError } from '../../src/domain/errors.ts';
import type { InstrumentSpec } from '../../src/domain/instrument.ts';
import { perpetualSpec } from '../../src/engine/testkit.ts';
import { Venue } from '../../src/engine/venue.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';
import { machinePorts } from './machine-ports.ts';

export const PORTFOLIO_E2E_START = Date.UTC(2026, 10, 20, 12);
export const PERP = 'BTC-PERPETUAL';

/** The core on a virtual clock, BTC-PERPETUAL listed (mark 120,000, BTC index 60,000) plus `extra`. */
export async function startCore(extra: readonly InstrumentSpec[] = []) {
  const START = PORTFOLIO_E2E_START;
  const venue = Venue.create();
  const algos = new PortfolioMachine(venueMarketView(venue));
  const machine = new CoreMachine(venue, new Map([['portfolios', algos]]));
  const clock = new VirtualClock(START);
  const { ports, submitMachine } = machinePorts(venue, machine, clock);
  for (const spec of [perpetualSpec(), ...extra]) {
    assert.ok((await ports.submit({ type: 'list_instrument', spec })).ok);
  }
  await ports.submit({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [{ instrumentName: PERP, markPrice: 120_000 }],
  });
  /** Moves the virtual clock by `ms`, submitting a timer at every wakeup the machine asks for. */
  const advance = async (ms: number) => {
    const target = clock.now() + ms;
    for (;;) {
      const next = algos.nextWakeup();
      if (next === null || next > target) break;
      clock.set(Math.max(clock.now(), next));
      await submitMachine({ type: 'timer' });
    }
    clock.set(target);
  };
  return { venue, algos, clock, ports, submitMachine, advance };
}

export type PortfolioCore = Awaited<ReturnType<typeof startCore>>;

export interface PortfolioHarness {
  readonly gateway: Gateway;
  readonly credentials: DemoCredential[];
  http(index: number): HttpClient;
  ws(index: number): WsClient;
  close(): Promise<void>;
}

/**
 * Combos listed on first use, as the market loop does (src/app/market-loop.ts `listCombo`): the
 * spec built from the listed legs, listed by a journaled `list_instrument`.
 */
export function comboPort(core: PortfolioCore): ComboPort {
  return {
    async list(name) {
      const request = parseComboName(name);
      if (request === null) throw new VenueError('invalid_instrument', `${name} is not a combo id`);
      const built = createCombo(request, (leg) => core.ports.reads.instrument(leg)?.spec, core.ports.now());
      if (!built.ok) throw new VenueError('invalid_instrument', `${name}: ${built.message}`);
      const result = await core.ports.submit({ type: 'list_instrument', spec: built.spec });
      if (!result.ok) throw new VenueError(result.error.name, result.error.message);
    },
  };
}

/** The gateway harness of test/support, with the portfolio routes registered before listen(). */
export async function startPortfolioHarness(core: PortfolioCore): Promise<PortfolioHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portfolio-e2e-'));
  const config = loadConfig({
    env: {},
    overrides: { port: 0, host: '127.0.0.1', logLevel: 'silent', dataDir } as DeepPartial<Config>,
  });
  const keyStore = new SqliteKeyStore(':memory:', SecretBox.fromText('33'.repeat(32)));
  const credentials = (await bootstrapDemo({ keyStore, commands: core.ports, dataDir }))!;
  const combos = comboPort(core);
  const gateway = createGateway({
    config,
    commands: core.ports,
    reads: core.ports.reads,
    history: core.ports.history,
    events: core.ports,
    keyStore,
    clock: new SystemClock(),
    combos,
  });
  registerPortfolioRoutes(gateway, {
    submitMachine: (command) => core.submitMachine(command),
    now: () => core.ports.now(),
    instrument: (name) => core.ports.reads.instrument(name),
    portfolios: () => core.algos,
    combos,
  });
  registerPortfolioChannels(gateway.channels, core.ports.reads);
  const { port } = await gateway.listen();
  const clients: WsClient[] = [];
  const now = () => core.ports.now();
  const credentialsOf = (index: number) => {
    const credential = credentials[index]!;
    return { apiKey: credential.apiKey, apiSecret: credential.apiSecret };
  };
  return {
    gateway,
    credentials,
    http: (index) =>
      new HttpClient({ baseUrl: `http://127.0.0.1:${port}`, credentials: credentialsOf(index), now }),
    ws(index) {
      const client = new WsClient({
        url: `ws://127.0.0.1:${port}/ws`,
        credentials: credentialsOf(index),
        now,
        reconnectDelayMs: 50,
      });
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((client) => client.close()));
      await gateway.close();
      keyStore.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A BALANCE portfolio of 100 lots bought on the perpetual at a limit below the market: it rests. */
export function restingBalance(accountId: number, price = '59000'): SubmitPortfolioBody {
  return {
    accountId,
    portfolioType: 'BALANCE',
    balanceTrade: { parts: 2, eachLimitMs: 60_000, totalLimitMs: 0, totalEndAction: 1 },
    legs: [
      {
        instrument: PERP,
        instrumentType: 'PERPETUAL',
        side: 1,
        quantity: '100',
        priceOptions: { priceType: 'LIMIT', price, priceIn: 'USD' },
      },
    ],
  };
}
