/**
 * Money conservation per currency: over random trades (block trades and crossing orders, so
 * positions grow, shrink and flip through zero in one fill), Σ balances + Σ fees − Σ dir ×
 * openCost of the futures positions stays exactly the deposits; options' premiums are cash at
 * the trade, and a futures position's value is its open cost until it closes. Settling the dated
 * instruments (inverse and USDC-settled; at a settlement index, or at the settlement price in ticks) rounds each position
 * against its holder: the venue keeps under one minor unit per position and never pays one out.
 * (docs/decisions.md, "Settlement index".)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { UnstampedCommand } from '../core/commands.ts';
import { DEFAULT_PRODUCTS, linearOptionSpec } from '../market/products.ts';
import { COMBO_EXPIRY, FUTURE, LOW_CALL, listCombos, PERP, PUT } from './combo-testkit.ts';
import { Harness, linearPerpetualSpec, orderCommand, propertySeed } from './testkit.ts';

const LINEAR_PERP = 'BTC_USDC-PERPETUAL';
const LINEAR_FUTURE = 'BTC_USDC-27DEC26';
/** USDC-settled options as the catalogue lists them (tick 5 USDC, lot 0.01 BTC). */
const LINEAR_CALL_SPEC = linearOptionSpec(DEFAULT_PRODUCTS.BTC!, COMBO_EXPIRY, 'month', 70_000, 'call', 0);
const LINEAR_PUT_SPEC = linearOptionSpec(DEFAULT_PRODUCTS.BTC!, COMBO_EXPIRY, 'month', 70_000, 'put', 0);
const LINEAR_CALL = LINEAR_CALL_SPEC.name;
const LINEAR_PUT = LINEAR_PUT_SPEC.name;

interface Traded {
  readonly name: string;
  readonly mark: number;
  /** Ticks a price step moves (options: 5, their 0.0005 BTC grid above 0.005). */
  readonly step: number;
  /** Lots a lot step trades. */
  readonly lots: number;
  /** −1 inverse futures, +1 linear futures, null options (their premium is cash). */
  readonly direction: 1 | -1 | null;
  readonly currency: 'BTC' | 'USDC';
}

const TRADED: readonly Traded[] = [
  { name: PERP, mark: 120_010, step: 1, lots: 13, direction: -1, currency: 'BTC' },
  { name: FUTURE, mark: 24_100, step: 1, lots: 13, direction: -1, currency: 'BTC' },
  { name: LOW_CALL, mark: 500, step: 5, lots: 1, direction: null, currency: 'BTC' },
  { name: PUT, mark: 1_700, step: 5, lots: 1, direction: null, currency: 'BTC' },
  { name: LINEAR_PERP, mark: 120_020, step: 7, lots: 7, direction: 1, currency: 'USDC' },
  { name: LINEAR_FUTURE, mark: 120_500, step: 7, lots: 7, direction: 1, currency: 'USDC' },
  { name: LINEAR_CALL, mark: 301, step: 3, lots: 3, direction: null, currency: 'USDC' },
  { name: LINEAR_PUT, mark: 2_003, step: 3, lots: 3, direction: null, currency: 'USDC' },
];
const BY_NAME = new Map(TRADED.map((t) => [t.name, t]));
const DATED = [FUTURE, LOW_CALL, PUT, LINEAR_FUTURE, LINEAR_CALL, LINEAR_PUT];
const ACCOUNTS = [1, 2, 3, 4];
const DEPOSITS = { BTC: 100_000_000_000, USDC: 100_000_000_000_000 };

type Step =
  | {
      kind: 'block';
      taker: number;
      maker: number;
      side: 'buy' | 'sell';
      at: number;
      lots: number;
      away: number;
    }
  | { kind: 'order'; account: number; side: 'buy' | 'sell'; at: number; lots: number; away: number };

const side = fc.constantFrom('buy' as const, 'sell' as const);
const account = fc.constantFrom(...ACCOUNTS);
const at = fc.nat(TRADED.length - 1);
const lots = fc.integer({ min: 1, max: 40 });
const away = fc.integer({ min: -40, max: 40 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('block' as const),
      taker: account,
      maker: account,
      side,
      at,
      lots,
      away,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('order' as const), account, side, at, lots, away }) },
);

function venue(): Harness {
  const h = new Harness();
  listCombos(h, []);
  h.list(linearPerpetualSpec());
  h.list(linearPerpetualSpec({ name: LINEAR_FUTURE, settlementPeriod: 'month', expiration: COMBO_EXPIRY }));
  h.list(LINEAR_CALL_SPEC);
  h.list(LINEAR_PUT_SPEC);
  for (const id of ACCOUNTS) h.account(id, DEPOSITS);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: TRADED.map((t) => ({ instrumentName: t.name, markPrice: t.mark })),
  });
  return h;
}

function command(s: Step): UnstampedCommand | null {
  const traded = TRADED[s.at]!;
  const price = Math.max(traded.step, traded.mark + s.away * traded.step);
  const amount = s.lots * traded.lots;
  if (s.kind === 'order')
    return orderCommand(s.account, s.side, amount, price, { instrumentName: traded.name });
  if (s.taker === s.maker) return null;
  return {
    type: 'block_trade',
    takerAccountId: s.taker,
    makerAccountId: s.maker,
    legs: [{ instrumentName: traded.name, side: s.side, amount, price }],
  };
}

/** Σ balances + fees − Σ dir × openCost − deposits, per currency (0 when nothing is made or lost). */
function residual(h: Harness, fees: Map<string, number>): Map<string, number> {
  const total = new Map<string, number>();
  for (const currency of ['BTC', 'USDC'] as const) {
    let sum = (fees.get(currency) ?? 0) - ACCOUNTS.length * DEPOSITS[currency];
    for (const id of ACCOUNTS) sum += h.venue.accountSummary(id, currency)!.balance;
    total.set(currency, sum);
  }
  for (const id of ACCOUNTS) {
    for (const position of h.venue.positions(id)) {
      const direction = BY_NAME.get(position.instrumentName)?.direction ?? null;
      if (direction === null) continue;
      const currency = position.settlementCurrency;
      total.set(currency, total.get(currency)! - direction * position.openCost);
    }
  }
  return total;
}

function noteFees(result: ReturnType<Harness['run']>, fees: Map<string, number>): void {
  if (!result.ok) return;
  for (const event of result.events) {
    if (event.type !== 'trade') continue;
    for (const party of [event.trade.taker, event.trade.maker])
      fees.set(party.feeCurrency, (fees.get(party.feeCurrency) ?? 0) + party.fee);
  }
}

/** A settlement price in ticks near the index (what the driver sends beside it). */
function settlementTicks(name: string, index: number): number {
  if (name === FUTURE) return Math.round(index / 2.5);
  if (name === LINEAR_FUTURE) return Math.round(index / 0.5);
  // USDC options settle at their intrinsic value in USDC, on their 5 USDC grid.
  if (name === LINEAR_CALL) return Math.round(Math.max(0, index - 70_000) / 5);
  if (name === LINEAR_PUT) return Math.round(Math.max(0, 70_000 - index) / 5);
  const intrinsic = name === LOW_CALL ? Math.max(0, index - 70_000) : Math.max(0, 70_000 - index);
  return Math.round(intrinsic / index / 0.0005) * 5;
}

test('property: trades and flips conserve money per currency exactly; settlement never pays out rounding', () => {
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 5, maxLength: 30 }),
      fc.integer({ min: 4_000_000, max: 9_000_000 }),
      fc.boolean(),
      (steps, indexCents, withIndex) => {
        const h = venue();
        const fees = new Map<string, number>();
        for (const s of steps) {
          const cmd = command(s);
          if (cmd === null) continue;
          const result = h.run(cmd);
          noteFees(result, fees);
          for (const [currency, left] of residual(h, fees))
            assert.equal(left, 0, `${currency} after a trade`);
        }
        const index = indexCents / 100;
        let before = residual(h, fees);
        for (const name of DATED) {
          const positions = ACCOUNTS.filter((id) => (h.venue.position(id, name)?.size ?? 0) !== 0).length;
          const result = h.run({
            type: 'settle_instrument',
            instrumentName: name,
            settlementPrice: settlementTicks(name, index),
            ...(withIndex ? { settlementIndex: index.toFixed(2) } : {}),
          });
          assert.ok(result.ok, `settling ${name}`);
          const after = residual(h, fees);
          const currency = BY_NAME.get(name)!.currency;
          const kept = before.get(currency)! - after.get(currency)!;
          assert.ok(kept >= 0, `settling ${name} paid out ${-kept} minor units`);
          assert.ok(
            kept < Math.max(1, positions),
            `settling ${name} kept ${kept} over ${positions} positions`,
          );
          before = after;
        }
        h.venue.validate();
      },
    ),
    { numRuns: Number(process.env.PROPERTY_RUNS ?? 120), seed: propertySeed() },
  );
});
