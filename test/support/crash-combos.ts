/**
 * Combo traffic for the crash test (test/crash/crash-restart.test.ts): two accounts cross on a
 * call spread and a future spread on the perpetual, chosen from the live catalogue as
 * test/e2e/combo-trades.e2e.test.ts does, and what the restarted service must still show of it.
 *
 * Each round one account rests an order on a combo at its legs' marks' difference and the other
 * takes it (immediate-or-cancel), so most rounds make one combo trade; a rest left unfilled is
 * cancelled. The first order on each combo lists it (a journaled `list_instrument`). Every order's
 * last answer, every combo trade an answer showed (as the taker's account sees it), and the
 * labels of the requests still unanswered when the service died are recorded: a trade the
 * restarted service lists must be one that was acknowledged or one of those.
 */
import assert from 'node:assert/strict';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { LegTrade, Order, Trade } from '../../sdk/types.ts';

export interface CrashCombo {
  readonly name: string;
  readonly kind: 'option_combo' | 'future_combo';
  /** The bought leg (ratio +1) and the sold one (−1). */
  readonly legs: readonly [string, string];
  /** The combo's tick and lot (its first leg's: src/market/combos.ts `createCombo`). */
  readonly tick: number;
  readonly lot: number;
}

export interface CrashCombos {
  readonly callSpread: CrashCombo;
  readonly futureSpread: CrashCombo;
  /** Lot of every leg, by name (to turn quantities into lots). */
  readonly legLots: ReadonlyMap<string, number>;
}

/** Expiries at least this far away, so no leg expires during the test. */
const MIN_LIFE_MS = 2 * 86_400_000;

/**
 * A call spread (the two lowest strikes of the nearest expiry at least two days away) and the
 * future spread of the nearest such dated future against the perpetual.
 */
export async function chooseCombos(client: HttpClient, now: number): Promise<CrashCombos> {
  const options = await client.call('public/get_instruments', { currency: 'BTC', kind: 'option' });
  const calls = options.filter(
    (i) =>
      /^BTC-\w+-\d+-C$/.test(i.instrumentName) && i.expiration !== null && i.expiration > now + MIN_LIFE_MS,
  );
  const expiry = Math.min(...calls.map((i) => i.expiration!));
  const [low, high] = calls
    .filter((i) => i.expiration === expiry)
    .sort((a, b) => Number(a.strike) - Number(b.strike));
  assert.ok(low !== undefined && high !== undefined, 'two calls of one expiry are listed');
  const code = low.instrumentName.split('-')[1]!;
  const futures = await client.call('public/get_instruments', { currency: 'BTC', kind: 'future' });
  const future = futures
    .filter((i) => /^BTC-\d{1,2}[A-Z]{3}\d{2}$/.test(i.instrumentName) && i.expiration! > now + MIN_LIFE_MS)
    .sort((a, b) => a.expiration! - b.expiration!)[0];
  const perpetual = futures.find((i) => i.instrumentName === 'BTC-PERPETUAL');
  assert.ok(
    future !== undefined && perpetual !== undefined,
    'a dated BTC future and the perpetual are listed',
  );
  const legLots = new Map<string, number>();
  for (const leg of [low, high, future, perpetual])
    legLots.set(leg.instrumentName, Number(leg.minTradeAmount));
  return {
    callSpread: {
      name: `BTC-CS-${code}-${low.instrumentName.split('-')[2]}_${high.instrumentName.split('-')[2]}`,
      kind: 'option_combo',
      legs: [low.instrumentName, high.instrumentName],
      tick: Number(low.tickSize),
      lot: Number(low.minTradeAmount),
    },
    futureSpread: {
      name: `BTC-FS-${future.instrumentName.split('-')[1]}_PERP`,
      kind: 'future_combo',
      legs: [future.instrumentName, perpetual.instrumentName],
      tick: Number(future.tickSize),
      lot: Number(future.minTradeAmount),
    },
    legLots,
  };
}

/** What the combo traffic of the whole run saw acknowledged, shared by its cycles. */
export class ComboLedger {
  /** Every combo order's last acknowledged view. */
  readonly orders = new Map<string, Order>();
  /** Every acknowledged combo trade, as the account whose order took it saw it (index into the clients). */
  readonly trades = new Map<string, { readonly client: number; readonly trade: Trade }>();
  /** Labels of the combo requests that had no answer when a service died (any cycle). */
  readonly unanswered = new Set<string>();
}

/** Decimal places of a step (0.0001 → 4, 2.5 → 1, 10 → 0). */
const decimals = (step: number) => (String(step).split('.')[1] ?? '').length;

/**
 * Combo rounds on `clients` (two accounts) until `stop()`; the future spread only when
 * `withFutureSpread` (from the second cycle, so its first use, and listing, follows a restart).
 */
export function driveComboTraffic(
  clients: readonly [HttpClient, HttpClient],
  combos: CrashCombos,
  ledger: ComboLedger,
  options: { readonly cycle: number; readonly seed: number; readonly withFutureSpread: boolean },
) {
  let running = true;
  let random = options.seed;
  const next = () => {
    random = (random * 1_103_515_245 + 12_345) % 2_147_483_648;
    return random / 2_147_483_648;
  };
  let rounds = 0;
  let traded = 0;
  /** Refusals (label: message), for the diagnostics: a refused round makes no trade. */
  const refused: string[] = [];
  /** One request; false when the service is gone (the label then stays unanswered). */
  const call = async <T>(label: string, send: () => Promise<T>): Promise<T | null | false> => {
    ledger.unanswered.add(label);
    try {
      const answer = await send();
      ledger.unanswered.delete(label);
      return answer;
    } catch (error) {
      if (!(error instanceof ApiError)) return false;
      refused.push(`${label}: ${error.message}`);
      ledger.unanswered.delete(label);
      return null;
    }
  };
  const record = (client: number, result: { order: Order; trades: Trade[] }) => {
    ledger.orders.set(result.order.orderId, result.order);
    for (const trade of result.trades) {
      ledger.trades.set(trade.tradeId, { client, trade });
      traded++;
    }
  };
  const markOf = async (client: HttpClient, instrumentName: string) =>
    Number((await client.call('public/ticker', { instrumentName })).markPrice);
  const round = async (): Promise<boolean> => {
    const n = rounds++;
    const combo = options.withFutureSpread && n % 2 === 1 ? combos.futureSpread : combos.callSpread;
    const maker = n % 4 < 2 ? 0 : 1;
    const taker = 1 - maker;
    const makerSide = next() < 0.5 ? 'buy' : 'sell';
    const marks = await call(`cx${options.cycle}-${n}-marks`, () =>
      Promise.all(combo.legs.map((leg) => markOf(clients[maker]!, leg))),
    );
    if (marks === false) return false;
    if (marks === null) return true;
    const price = (Math.round((marks[0]! - marks[1]!) / combo.tick) * combo.tick).toFixed(
      decimals(combo.tick),
    );
    const quantity = (combo.lot * (1 + Math.floor(next() * 3))).toFixed(decimals(combo.lot));
    const method = (side: string) => (side === 'buy' ? 'private/buy' : 'private/sell');
    const makerLabel = `cx${options.cycle}-${n}-m`;
    const rested = await call(makerLabel, () =>
      clients[maker]!.call(method(makerSide), {
        instrumentName: combo.name,
        quantity,
        price,
        label: makerLabel,
      }),
    );
    if (rested === false) return false;
    if (rested === null) return true;
    record(maker, rested);
    const takerLabel = `cx${options.cycle}-${n}-t`;
    const taken = await call(takerLabel, () =>
      clients[taker]!.call(method(makerSide === 'buy' ? 'sell' : 'buy'), {
        instrumentName: combo.name,
        quantity,
        price,
        label: takerLabel,
        timeInForce: 'immediate_or_cancel',
      }),
    );
    if (taken === false) return false;
    if (taken !== null) record(taker, taken);
    if (rested.order.orderState === 'open' && (taken === null || taken.order.filledQuantity !== quantity)) {
      const orderId = rested.order.orderId;
      const cancelled = await call(`${makerLabel}-cancel`, () =>
        clients[maker]!.call('private/cancel', { orderId }),
      );
      if (cancelled === false) return false;
      if (cancelled !== null) ledger.orders.set(orderId, cancelled);
    }
    return true;
  };
  const done = (async () => {
    while (running && (await round()));
  })();
  return {
    get rounds() {
      return rounds;
    },
    get traded() {
      return traded;
    },
    refused,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Every page of the account's trades of one kind, by trade id. */
async function tradesOfKind(
  client: HttpClient,
  kind: 'option_combo' | 'future_combo' | 'option' | 'future',
): Promise<Map<string, Trade>> {
  const out = new Map<string, Trade>();
  let continuation: string | null = null;
  do {
    const page: { trades: Trade[]; continuation: string | null } = await client.call(
      'private/get_user_trades_by_currency',
      {
        currency: 'BTC',
        kind,
        count: 1000,
        sorting: 'asc',
        ...(continuation === null ? {} : { continuation }),
      },
    );
    for (const trade of page.trades) out.set(trade.tradeId, trade);
    continuation = page.continuation;
  } while (continuation !== null);
  return out;
}

export interface ComboView {
  /** The combo trades (with legs) and the leg trades each account lists, by trade id. */
  readonly comboTrades: readonly Map<string, Trade>[];
  readonly legTrades: readonly Map<string, Trade>[];
  /** Each account's non-zero positions, in lots, by instrument. */
  readonly positions: readonly Map<string, number>[];
}

/**
 * Checks what the restarted service shows of the combo traffic against what was acknowledged:
 * every acknowledged combo trade is listed under its combo kind exactly as its answer showed it,
 * and each of its leg trades under the leg's kind; a listed combo trade nobody acknowledged was
 * taken by a request left unanswered at a kill; the two accounts list the same combo trades, and
 * all their leg trades belong to them; each account's positions are the sum of its leg trades,
 * on the legs only (none on a combo), and net to zero between the two accounts.
 */
export async function checkComboTraffic(
  clients: readonly [HttpClient, HttpClient],
  combos: CrashCombos,
  ledger: ComboLedger,
  at: string,
): Promise<ComboView> {
  const comboNames = new Set([combos.callSpread.name, combos.futureSpread.name]);
  const comboTrades: Map<string, Trade>[] = [];
  const legTrades: Map<string, Trade>[] = [];
  const positions: Map<string, number>[] = [];
  for (const client of clients) {
    const combosListed = new Map([
      ...(await tradesOfKind(client, 'option_combo')),
      ...(await tradesOfKind(client, 'future_combo')),
    ]);
    const legsListed = new Map([
      ...(await tradesOfKind(client, 'option')),
      ...(await tradesOfKind(client, 'future')),
    ]);
    comboTrades.push(combosListed);
    legTrades.push(legsListed);
    const held = new Map<string, number>();
    for (const position of await client.call('private/get_positions', { currency: 'BTC' })) {
      if (Number(position.size) === 0) continue;
      assert.ok(
        !comboNames.has(position.instrumentName),
        `${at}: a position on the combo ${position.instrumentName}`,
      );
      held.set(position.instrumentName, lotsOf(combos, position.instrumentName, position.size));
    }
    positions.push(held);
  }
  for (const [tradeId, { client, trade }] of ledger.trades) {
    assert.deepEqual(comboTrades[client]!.get(tradeId), trade, `${at}: acknowledged combo trade ${tradeId}`);
    for (const leg of trade.legs ?? []) {
      assert.equal(leg.comboId, trade.instrumentName);
      assert.equal(leg.comboTradeId, tradeId);
      assert.deepEqual(
        legTrades[client]!.get(leg.tradeId),
        leg,
        `${at}: leg trade ${leg.tradeId} of acknowledged combo trade ${tradeId}`,
      );
    }
  }
  assert.deepEqual(
    [...comboTrades[0]!.keys()].sort(),
    [...comboTrades[1]!.keys()].sort(),
    `${at}: both accounts list the same combo trades`,
  );
  for (const [index, listed] of comboTrades.entries()) {
    for (const trade of listed.values()) {
      assert.ok(comboNames.has(trade.instrumentName), `${at}: combo trade on ${trade.instrumentName}`);
      assert.equal(trade.legs?.length, 2, `${at}: combo trade ${trade.tradeId} lists its two legs`);
      if (trade.liquidity === 'T' && !ledger.trades.has(trade.tradeId))
        assert.ok(
          ledger.unanswered.has(trade.label ?? ''),
          `${at}: combo trade ${trade.tradeId} of account ${index} (order ${trade.label}) was never acknowledged`,
        );
      for (const leg of trade.legs!)
        assert.deepEqual(legTrades[index]!.get(leg.tradeId), leg, `${at}: leg trade ${leg.tradeId} listed`);
    }
    // These accounts trade combos only: every leg trade belongs to a listed combo trade.
    const expected = new Map<string, number>();
    for (const leg of legTrades[index]!.values()) {
      assert.ok(
        leg.comboTradeId !== undefined &&
          listed.get(leg.comboTradeId)?.legs?.some((l: LegTrade) => l.tradeId === leg.tradeId),
        `${at}: leg trade ${leg.tradeId} belongs to a listed combo trade`,
      );
      const lots = lotsOf(combos, leg.instrumentName, leg.quantity) * (leg.side === 'buy' ? 1 : -1);
      expected.set(leg.instrumentName, (expected.get(leg.instrumentName) ?? 0) + lots);
    }
    for (const [name, lots] of [...expected]) if (lots === 0) expected.delete(name);
    assert.deepEqual(
      positions[index],
      expected,
      `${at}: account ${index}'s positions are its leg trades' sums`,
    );
  }
  for (const [name, lots] of positions[0]!) {
    assert.equal(lots + (positions[1]!.get(name) ?? 0), 0, `${at}: ${name} positions net to zero`);
  }
  return { comboTrades, legTrades, positions };
}

function lotsOf(combos: CrashCombos, instrumentName: string, quantity: string): number {
  const lot = combos.legLots.get(instrumentName);
  assert.ok(lot !== undefined, `a position or leg trade on ${instrumentName}, not a leg of the combos`);
  const lots = Number(quantity) / lot;
  assert.ok(Math.abs(lots - Math.round(lots)) < 1e-9, `${quantity} of ${instrumentName} is whole lots`);
  return Math.round(lots);
}
