import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandResult } from '../core/events.ts';
import { LOW_CALL, listCombos, PUT, STRADDLE } from './combo-testkit.ts';
import { Harness, linearPerpetualSpec, optionSpec, perpetualSpec, spotSpec } from './testkit.ts';

const OPTION = 'BTC-27DEC26-70000-C';

describe('accounts', () => {
  test('deposits and withdrawals move the balance; withdrawals need available funds', () => {
    const h = new Harness();
    h.ok({ type: 'create_account', accountId: 7 });
    const deposit = h.ok({ type: 'deposit', accountId: 7, currency: 'BTC', amount: 500 });
    assert.deepEqual(deposit.events[0], {
      type: 'balance',
      accountId: 7,
      currency: 'BTC',
      balance: 500,
      change: 500,
      reason: 'deposit',
    });
    assert.equal(h.run({ type: 'withdraw', accountId: 7, currency: 'BTC', amount: 501 }).ok, false);
    h.ok({ type: 'withdraw', accountId: 7, currency: 'BTC', amount: 200 });
    assert.equal(h.venue.accountSummary(7, 'BTC')!.balance, 300);
    assert.equal(h.run({ type: 'create_account', accountId: 7 }).ok, false);
    assert.equal(h.run({ type: 'deposit', accountId: 8, currency: 'BTC', amount: 1 }).ok, false);
  });

  test('a deposit that would take the balance past 2^53 minor units is refused, naming amount', () => {
    const h = new Harness();
    h.account(7, { USDC: Number.MAX_SAFE_INTEGER - 10 });
    const refused = h.run({ type: 'deposit', accountId: 7, currency: 'USDC', amount: 11 });
    assert.equal(refused.ok, false);
    assert.equal(refused.ok ? null : refused.error.data.field, 'amount');
    h.ok({ type: 'deposit', accountId: 7, currency: 'USDC', amount: 10 });
    assert.equal(h.venue.accountSummary(7, 'USDC')!.balance, Number.MAX_SAFE_INTEGER);
  });

  test('reading the summary of a currency the account holds nothing in changes no state', () => {
    const h = new Harness();
    h.account(7, { BTC: 500 });
    const before = h.venue.stateHash();
    assert.equal(h.venue.accountSummary(7, 'USDC')!.balance, 0);
    assert.deepEqual(h.venue.account(7)!.currencies, ['BTC']);
    // The live core must stay equal to a replay of the journal, which never ran the read.
    assert.equal(h.venue.stateHash(), before);
  });
});

describe('cash flows per instrument kind', () => {
  test('options: the buyer pays the premium and both pay fees; PnL is reported, not paid twice', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 50_000 }] });
    h.order(1, 'sell', 10, 100, { instrumentName: OPTION }); // 1 BTC at 0.01 BTC
    const trade = h.order(2, 'buy', 10, 100, { instrumentName: OPTION }).trades![0]!;
    assert.equal(trade.taker.fee, 30_000); // 1 BTC × 0.03% (below the 12.5% cap of 125,000)
    assert.equal(trade.indexPrice, 50_000);
    assert.equal(h.venue.accountSummary(2, 'BTC')!.balance, 100_000_000_000 - 1_000_000 - 30_000);
    assert.equal(h.venue.accountSummary(1, 'BTC')!.balance, 100_000_000_000 + 1_000_000 - 30_000);
    assert.equal(h.venue.position(2, OPTION)!.size, 10);
    assert.equal(h.venue.position(1, OPTION)!.size, -10);
    // At a mark of 0.015 BTC the long is up 0.005 BTC on its 1 BTC, the short down as much.
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 150 }] });
    const floating = (account: number) =>
      h.venue.positions(account).find((p) => p.instrumentName === OPTION)!.floatingPnl;
    assert.deepEqual([floating(2), floating(1)], [500_000, -500_000]);
    assert.equal(h.venue.positions(2)[0]!.markPrice, 150);
    // An event's view of a position, valued at the mark now, is what the positions read shows.
    const view = h.venue.position(2, OPTION)!;
    assert.deepEqual(h.venue.valuedPosition(view), h.venue.positions(2)[0]);
    assert.equal(h.venue.valuedPosition({ ...view, size: 0, openCost: 0 }).floatingPnl, 0);
    assert.equal(h.venue.valuedPosition({ ...view, instrumentName: 'BTC-NOPE' }).markPrice, null);
    // Trades carry the forward of the expiry once the market publishes it with the mark.
    assert.equal(trade.underlyingPrice, null);
    h.ok({
      type: 'update_prices',
      markPrices: [{ instrumentName: OPTION, markPrice: 150, delta: 0.5, vega: 10, forwardFactor: 1.02 }],
    });
    h.order(1, 'sell', 10, 150, { instrumentName: OPTION });
    const later = h.order(2, 'buy', 10, 150, { instrumentName: OPTION }).trades![0]!;
    assert.equal(later.underlyingPrice, 50_000 * 1.02);
    assert.equal(later.indexPrice, 50_000);
  });

  test('spot: quote currency against base currency, no position', () => {
    const h = new Harness();
    h.list(spotSpec());
    h.account(1, { BTC: 100_000_000 });
    h.account(2, { USDC: 1_000_000_000 });
    h.order(1, 'sell', 100, 50_000, { instrumentName: 'BTC_USDC' }); // 0.01 BTC at 50,000
    const trade = h.order(2, 'buy', 100, 50_000, { instrumentName: 'BTC_USDC' }).trades![0]!;
    assert.equal(trade.taker.feeCurrency, 'USDC');
    assert.equal(h.venue.accountSummary(2, 'BTC')!.balance, 1_000_000);
    assert.equal(h.venue.accountSummary(2, 'USDC')!.balance, 1_000_000_000 - 500_000_000 - 500_000);
    assert.equal(h.venue.accountSummary(1, 'USDC')!.balance, 500_000_000);
    assert.equal(h.venue.accountSummary(1, 'BTC')!.balance, 99_000_000);
    assert.equal(h.venue.position(2, 'BTC_USDC'), null);
  });

  test('spot: reduceOnly is refused the same way on placing, on a trigger order and on an edit', () => {
    const h = new Harness();
    h.list(spotSpec());
    h.account(1, { BTC: 100_000_000 });
    const spot = { instrumentName: 'BTC_USDC' };
    const refusals = [
      h.order(1, 'sell', 100, 50_000, { ...spot, reduceOnly: true }),
      h.order(1, 'sell', 100, 50_000, {
        ...spot,
        reduceOnly: true,
        orderType: 'stop_limit',
        trigger: 'index_price',
        triggerPrice: 40_000,
      }),
      h.run({
        type: 'edit_order',
        accountId: 1,
        orderId: h.order(1, 'sell', 100, 50_000, spot).order!.orderId,
        amount: 100,
        price: 51_000,
        reduceOnly: true,
      }),
    ];
    for (const refused of refusals) {
      assert.equal(refused.ok, false);
      assert.deepEqual(!refused.ok && [refused.error.name, refused.error.data.field], [
        'invalid_arguments',
        'reduceOnly',
      ]);
    }
  });

  test('linear futures: realised PnL and fees in USDC, maker rebate credited', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    h.account(1, { USDC: 1e12 });
    h.account(2, { USDC: 1e12 });
    const name = 'BTC_USDC-PERPETUAL';
    h.order(1, 'sell', 10, 100_000, { instrumentName: name });
    h.order(2, 'buy', 10, 100_000, { instrumentName: name });
    h.order(1, 'buy', 10, 102_000, { instrumentName: name });
    const close = h.order(2, 'sell', 10, 102_000, { instrumentName: name }).trades![0]!;
    assert.equal(close.taker.profitLoss, 10_000_000); // 0.01 BTC × 1,000 USDC
    assert.equal(close.maker.profitLoss, -10_000_000);
    assert.equal(close.maker.fee, -51_000); // 0.01% rebate of 510 USDC
    assert.equal(h.venue.position(2, name)!.realisedPnl, 10_000_000);
  });

  test('a resting spot sell reserves its base amount, so a second sell beyond the balance is refused', () => {
    const h = new Harness();
    h.list(spotSpec());
    h.account(1, { BTC: 1_000_000 }); // 0.01 BTC: 100 lots
    h.account(2, { USDC: 1_000_000_000 });
    const first = h.order(1, 'sell', 100, 50_000, { instrumentName: 'BTC_USDC' });
    assert.ok(first.ok, 'the first sell of the whole balance rests');
    assert.equal(h.venue.accountSummary(1, 'BTC')!.orderMargin, 1_000_000, 'base amount reserved');
    const second = h.order(1, 'sell', 100, 50_000, { instrumentName: 'BTC_USDC' });
    assert.ok(!second.ok, 'a second sell of the same BTC is refused');
  });
});

describe('margin with a mark price', () => {
  test('unrealised PnL enters equity; position margin is taken from available funds', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    h.account(1, { USDC: 1e12 });
    h.account(2, { USDC: 1e12 });
    const name = 'BTC_USDC-PERPETUAL';
    h.order(1, 'sell', 1000, 100_000, { instrumentName: name });
    h.order(2, 'buy', 1000, 100_000, { instrumentName: name }); // 1 BTC long at 50,000
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: name, markPrice: 102_000 }] });
    const summary = h.venue.accountSummary(2, 'USDC')!;
    assert.equal(summary.positionValue, 1_000_000_000); // +1,000 USDC
    assert.equal(summary.positionMargin, 2_550_000_000); // 5% of 51,000
    assert.equal(summary.availableFunds, summary.equity - summary.positionMargin - summary.orderMargin);
  });

  test('a future bought above its mark reserves the loss against the mark with its margin', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.account(2, { BTC: 100_000_000 });
    h.ok({
      type: 'update_prices',
      markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: 100_000 }], // 50,000 USD
    });
    const free = h.venue.accountSummary(2, 'BTC')!.availableFunds;
    assert.ok(h.order(2, 'buy', 100, 101_000).ok); // 1,000 USD at 50,500
    // 5% of 1,000/50,000 BTC (the notional at the mark, on which the position is margined once
    // filled), the taker fee, and 1,000/50,000 − 1,000/50,500 BTC marked away at once.
    const margin = Math.ceil(2_000_000 * 0.05);
    const fee = Math.ceil(1_980_198 * 0.0005);
    assert.equal(
      free - h.venue.accountSummary(2, 'BTC')!.availableFunds,
      margin + fee + (2_000_000 - 1_980_198),
    );
  });

  test('orders that only reduce a position need no margin', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.account(1);
    h.account(2, { BTC: 2_000_000 });
    h.order(1, 'sell', 100, 100_000);
    assert.ok(h.order(2, 'buy', 100, 100_000).ok); // margin 100,000 + fee 1,000
    const before = h.venue.accountSummary(2, 'BTC')!.orderMargin;
    assert.ok(h.order(2, 'sell', 100, 120_000).ok);
    assert.equal(h.venue.accountSummary(2, 'BTC')!.orderMargin - before, 834); // the taker fee only
  });
});

test('orderMargins: what an order would reserve on each side, as placing it reserves, read without changing state', () => {
  const h = new Harness();
  h.list(perpetualSpec());
  h.list(optionSpec());
  h.account(1);
  h.account(2, { BTC: 100_000_000 });
  h.markPerpetual();
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 150 }] });
  h.order(1, 'sell', 100, 100_000);
  assert.ok(h.order(2, 'buy', 100, 100_000).ok); // account 2 long 1,000 USD
  const cases: Array<[string, 'buy' | 'sell', number, number]> = [
    ['BTC-PERPETUAL', 'buy', 100, 101_000], // opens more, above the mark
    ['BTC-PERPETUAL', 'sell', 100, 99_000], // closes the long: the fee and the loss against the mark
    ['BTC-PERPETUAL', 'sell', 300, 100_000], // closes it and opens a short
    [OPTION, 'buy', 10, 150],
    [OPTION, 'sell', 10, 150], // naked short
  ];
  for (const [instrumentName, side, lots, price] of cases) {
    const hash = h.venue.stateHash();
    const margins = h.venue.orderMargins(2, instrumentName, lots, price);
    assert.equal(h.venue.stateHash(), hash, 'a read');
    assert.ok(margins.ok);
    const before = h.venue.accountSummary(2, 'BTC')!.orderMargin;
    const placed = h.order(2, side, lots, price, { instrumentName, postOnly: false });
    assert.ok(placed.ok, `${instrumentName} ${side}`);
    const reserved = h.venue.accountSummary(2, 'BTC')!.orderMargin - before;
    assert.deepEqual(
      margins[side],
      { currency: 'BTC', amount: reserved },
      `${instrumentName} ${side} ${lots}@${price}`,
    );
    h.ok({ type: 'cancel_order', accountId: 2, orderId: placed.order!.orderId });
  }
  // What refuses any order there refuses the read: as placing names it.
  const refusedFor = (accountId: number, instrumentName: string, price: number) => {
    const margins = h.venue.orderMargins(accountId, instrumentName, 10, price);
    return margins.ok ? null : [margins.error.name, margins.error.data.field];
  };
  assert.deepEqual(refusedFor(2, 'BTC-NOPE', 100), ['invalid_instrument', 'instrumentName']);
  assert.deepEqual(refusedFor(99, 'BTC-PERPETUAL', 100_000), ['account_not_found', 'accountId']);
  assert.deepEqual(refusedFor(2, 'BTC-PERPETUAL', 0), ['invalid_price', 'price']);
  assert.deepEqual(refusedFor(2, 'BTC-PERPETUAL', -100_000), ['invalid_price', 'price']);
  h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
  assert.deepEqual(refusedFor(2, OPTION, 150), ['instrument_expired', 'instrumentName']);
});

describe('settlement', () => {
  test('cancels open orders, closes positions at the settlement price and expires the instrument', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    h.order(1, 'sell', 10, 100, { instrumentName: OPTION });
    h.order(2, 'buy', 10, 100, { instrumentName: OPTION });
    const resting = h.order(1, 'sell', 5, 200, { instrumentName: OPTION }).order!.orderId;
    const balances = [1, 2].map((a) => h.venue.accountSummary(a, 'BTC')!.balance);
    const result = h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
    assert.equal(h.venue.getOrder(resting)!.cancelReason, 'settlement');
    // The closed position is reported, then dropped (an expired instrument's positions are not listed).
    assert.deepEqual(
      closedPositions(result).get(2),
      { size: 0, realisedPnl: 2_000_000 }, // (0.03 − 0.01) × 1 BTC
    );
    assert.equal(h.venue.position(2, OPTION), null);
    assert.equal(h.venue.accountSummary(2, 'BTC')!.balance - balances[1]!, 3_000_000); // payoff received
    assert.equal(h.venue.accountSummary(1, 'BTC')!.balance - balances[0]!, -3_000_000);
    // Each settlement's balance event names the position it closed (the settlement history's entry).
    const settlements = result.events.flatMap((e) =>
      e.type === 'balance' && e.reason === 'settlement' ? [[e.accountId, e.change, e.settlement]] : [],
    );
    assert.deepEqual(settlements, [
      [
        1,
        -3_000_000,
        {
          instrumentName: OPTION,
          size: -10,
          settlementPrice: 300,
          settlementIndex: null,
          profitLoss: -2_000_000,
        },
      ],
      [
        2,
        3_000_000,
        {
          instrumentName: OPTION,
          size: 10,
          settlementPrice: 300,
          settlementIndex: null,
          profitLoss: 2_000_000,
        },
      ],
    ]);
    assert.equal(result.events.at(-1)!.type, 'instrument');
    assert.equal(h.venue.instrument(OPTION)!.status, 'expired');
    const late = h.order(1, 'sell', 1, 100, { instrumentName: OPTION });
    assert.equal(!late.ok && late.error.name, 'instrument_expired');
  });

  /** The positions a settlement closed, by account: their size and final realised PnL. */
  function closedPositions(result: CommandResult): Map<number, { size: number; realisedPnl: number }> {
    const closed = new Map<number, { size: number; realisedPnl: number }>();
    for (const e of result.events)
      if (e.type === 'position')
        closed.set(e.position.accountId, { size: e.position.size, realisedPnl: e.position.realisedPnl });
    return closed;
  }

  /** Account 2 long and account 1 short `lots` of `spec` at `price`; settled by `settle`. */
  function settled(
    spec: ReturnType<typeof optionSpec>,
    price: number,
    settle: Record<string, unknown>,
    lots = 10,
  ) {
    const h = new Harness();
    h.list(spec);
    h.account(1, { BTC: 100_000_000_000, USDC: 100_000_000_000 });
    h.account(2, { BTC: 100_000_000_000, USDC: 100_000_000_000 });
    h.order(1, 'sell', lots, price, { instrumentName: spec.name });
    h.order(2, 'buy', lots, price, { instrumentName: spec.name });
    const currency = spec.settlementCurrency;
    const balances = [1, 2].map((a) => h.venue.accountSummary(a, currency)!.balance);
    const result = h.run({ type: 'settle_instrument', instrumentName: spec.name, ...settle } as never);
    const change = (a: number) => h.venue.accountSummary(a, currency)!.balance - balances[a - 1]!;
    return { h, result, short: change(1), long: change(2) };
  }

  test('options settle at their exact payoff against the settlement index, not a rounded tick', () => {
    // 1 BTC of the 70,000 call at 73,333.33: 3,333.33 / 73,333.33 BTC = 4,545,450.2 sat. Rounded
    // to the option's 0.0001 tick (455 ticks) it would have paid 4,550,000. The payoff rounds
    // against each holder: the long receives 4,545,450, the short pays 4,545,451.
    const call = settled(optionSpec(), 100, { settlementPrice: 455, settlementIndex: '73333.33' });
    assert.equal(call.long, 4_545_450);
    assert.equal(call.short, -4_545_451);
    assert.equal(closedPositions(call.result).get(2)!.realisedPnl, 4_545_450 - 1_000_000);
    assert.equal(closedPositions(call.result).get(1)!.realisedPnl, 1_000_000 - 4_545_451);
    assert.equal(call.h.venue.instrument(OPTION)!.settlementPrice, 455);
    call.h.venue.validate();
    // 0.1 BTC of a USDC-settled 70,000 put at 65,432.10: 456.79 USDC, where the 5 USDC tick gives 457.
    const linearPut = optionSpec({
      name: 'BTC_USDC-27DEC26-70000-P',
      optionType: 'put',
      quoteCurrency: 'USDC',
      settlementCurrency: 'USDC',
      marginKind: 'linear',
      tickSize: '5',
      tickSizeSteps: [],
      minTradeAmount: '0.01',
    });
    const put = settled(linearPut, 900, { settlementPrice: 914, settlementIndex: '65432.10' });
    assert.equal(put.long, 456_790_000);
    assert.equal(put.short, -456_790_000);
    // Out of the money pays nothing, exactly.
    const worthless = settled(optionSpec(), 100, { settlementPrice: 0, settlementIndex: '69999.99' });
    assert.deepEqual([worthless.long, worthless.short], [0, 0]);
  });

  test('dated futures settle at the exact index, not at the index rounded to their tick', () => {
    const future = perpetualSpec({
      name: 'BTC-27DEC26',
      settlementPeriod: 'month',
      expiration: Date.UTC(2026, 11, 27, 8),
      tickSize: '2.5',
    });
    // 10,000 USD bought at 60,000, settled at 61,234.56: 10,000/60,000 − 10,000/61,234.56 BTC.
    // At the tick (61,235) it would have been 336,137. The exit value, 16,330,647.27 sat, rounds
    // against each holder: up for the long (an inverse long gains as it falls), down for the short.
    const { h, result, long, short } = settled(
      future,
      24_000,
      { settlementPrice: 24_494, settlementIndex: '61234.56' },
      1000,
    );
    assert.equal(long, 16_666_667 - 16_330_648);
    assert.equal(short, -(16_666_667 - 16_330_647));
    assert.equal(closedPositions(result).get(2)!.realisedPnl, 336_019);
    h.venue.validate();
  });

  /**
   * Account 1 long `a + b` lots at `price`, bought from 2 (`a`) and 3 (`b`); settled by `settle`.
   * Returns the settlement's balance changes and Σ balances + fees − deposits afterwards.
   */
  function settledAgainstTwo(
    spec: ReturnType<typeof optionSpec>,
    price: number,
    a: number,
    b: number,
    settle: Record<string, unknown>,
  ) {
    const h = new Harness();
    h.list(spec);
    for (const id of [1, 2, 3]) h.account(id, { BTC: 1_000_000_000 });
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: spec.name, markPrice: price }],
    });
    let fees = 0;
    for (const [maker, amount] of [
      [2, a],
      [3, b],
    ] as const) {
      const result = h.ok({
        type: 'block_trade',
        takerAccountId: 1,
        makerAccountId: maker,
        legs: [{ instrumentName: spec.name, side: 'buy', amount, price }],
      });
      for (const trade of result.trades!) fees += trade.taker.fee + trade.maker.fee;
    }
    const result = h.ok({ type: 'settle_instrument', instrumentName: spec.name, ...settle } as never);
    const changes = [1, 2, 3].map((id) => {
      for (const e of result.events)
        if (e.type === 'balance' && e.accountId === id && e.reason === 'settlement') return e.change;
      return undefined;
    });
    let residual = fees - 3_000_000_000;
    for (const id of [1, 2, 3]) residual += h.venue.accountSummary(id, 'BTC')!.balance;
    h.venue.validate();
    return { changes, residual };
  }

  test('each position settles rounded against its holder: the venue never pays out a rounding unit', () => {
    const future = perpetualSpec({
      name: 'BTC-27DEC26',
      settlementPeriod: 'month',
      expiration: Date.UTC(2026, 11, 27, 8),
      tickSize: '2.5',
    });
    // 520 USD long against 390 and 130 short at 40,000.05: 1,299,998.375, 974,998.78 and
    // 324,999.59 sat of exit value. Rounded to nearest the two shorts got 1 sat more than the
    // long gave; now the long's exit rounds up and the shorts' down.
    const index = settledAgainstTwo(future, 24_100, 39, 13, {
      settlementPrice: 16_000,
      settlementIndex: '40000.05',
    });
    assert.deepEqual(index.changes, [-436_928, 327_695, 109_231]);
    assert.equal(index.residual, -2);
    // Without an index, at the settlement price in ticks (40,002.5 USD), the same way.
    const ticks = settledAgainstTwo(future, 24_100, 1, 2, { settlementPrice: 16_001 });
    assert.deepEqual(ticks.changes, [-25_203, 8_400, 16_801]);
    assert.equal(ticks.residual, -2);
    // The 70,000 call at 70,000.38 pays 54.28 sat per 0.1 BTC: the long's 0.2 BTC gets 108
    // (108.57) and each short's 0.1 BTC pays 55; rounded to nearest the long got 109 and each
    // short paid 54.
    const call = settledAgainstTwo(optionSpec(), 500, 1, 1, {
      settlementPrice: 1,
      settlementIndex: '70000.38',
    });
    assert.deepEqual(call.changes, [108, -55, -55]);
    assert.equal(call.residual, -2);
  });

  test('a settlement index that is not a positive decimal is refused, and nothing settles', () => {
    for (const settlementIndex of ['0', '-65000', 'abc', ' 65000', 65_000]) {
      const { h, result, long } = settled(optionSpec(), 100, { settlementPrice: 300, settlementIndex });
      assert.equal(!result.ok && result.error.name, 'invalid_price', String(settlementIndex));
      assert.equal(!result.ok && result.error.data.field, 'settlementIndex');
      assert.equal(long, 0);
      assert.equal(h.venue.instrument(OPTION)!.status, 'open');
    }
  });
});

describe('block trades', () => {
  test('books one trade per leg between two accounts, with block ids', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    const result = h.ok({
      type: 'block_trade',
      takerAccountId: 1,
      makerAccountId: 2,
      blockRfqId: 'RFQ-1',
      blockRfqQuoteId: 'Q-1',
      legs: [
        { instrumentName: OPTION, side: 'buy', amount: 10, price: 100 },
        { instrumentName: 'BTC-PERPETUAL', side: 'sell', amount: 5, price: 100_000 },
      ],
    });
    assert.equal(result.blockTradeId, 'BLOCK-1');
    assert.equal(result.trades!.length, 2);
    assert.equal(result.trades![0]!.blockRfqId, 'RFQ-1');
    assert.equal(result.trades![1]!.taker.side, 'sell');
    assert.equal(h.venue.position(1, OPTION)!.size, 10);
    assert.equal(h.venue.position(2, 'BTC-PERPETUAL')!.size, 5);
    const takerOrder = h.venue.getOrder(result.trades![0]!.taker.orderId)!;
    assert.equal(takerOrder.blockTrade, true);
    assert.equal(takerOrder.orderState, 'filled');
    // Made through the API (accept, quotes): the orders and trades say so, both sides.
    assert.equal(takerOrder.api, true);
    const makerOrder = h.venue.getOrder(result.trades![0]!.maker.orderId)!;
    assert.equal(makerOrder.api, true);
    assert.ok(result.trades!.every((trade) => trade.taker.api && trade.maker.api));
  });

  test('all or nothing: one bad leg or missing funds books nothing', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.list(optionSpec());
    h.account(1);
    h.account(2, { BTC: 10 });
    const bad = h.run({
      type: 'block_trade',
      takerAccountId: 1,
      makerAccountId: 2,
      legs: [
        { instrumentName: OPTION, side: 'buy', amount: 10, price: 100 },
        { instrumentName: 'NOPE', side: 'buy', amount: 1, price: 1 },
      ],
    });
    assert.equal(!bad.ok && bad.error.name, 'invalid_instrument');
    const poor = h.run({
      type: 'block_trade',
      takerAccountId: 1,
      makerAccountId: 2,
      legs: [{ instrumentName: OPTION, side: 'buy', amount: 10, price: 100 }],
    });
    assert.equal(!poor.ok && poor.error.name, 'not_enough_funds');
    assert.equal(h.venue.position(1, OPTION), null);
    assert.equal(h.venue.instrument(OPTION)!.tradeSeq, 0);
  });

  test('prices of options, futures and spot must be positive: no negative premium or fee', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    for (const [instrumentName, price] of [
      [OPTION, -100],
      [OPTION, 0],
      ['BTC-PERPETUAL', -130_000],
    ] as const) {
      const result = h.run({
        type: 'block_trade',
        takerAccountId: 1,
        makerAccountId: 2,
        legs: [
          { instrumentName: OPTION, side: 'buy', amount: 10, price: 100 },
          { instrumentName, side: 'sell', amount: 10, price },
        ],
      });
      assert.equal(!result.ok && result.error.name, 'invalid_price');
      assert.equal(!result.ok && result.error.data.field, 'legs[1].price');
    }
    assert.equal(h.venue.instrument(OPTION)!.tradeSeq, 0);
  });

  test('a batch books every block or none: funds are checked over all blocks together', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1, { BTC: 1_500_000 }); // 0.015 BTC: one block's premium (0.01) but not two
    h.account(2);
    h.account(3);
    const block = (makerAccountId: number) => ({
      takerAccountId: 1,
      makerAccountId,
      legs: [{ instrumentName: OPTION, side: 'buy' as const, amount: 10, price: 100 }],
    });
    const refused = h.run({ type: 'block_trade', ...block(2), batch: [block(3)] });
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.error.name, 'not_enough_funds');
      assert.equal(refused.error.data.field, 'takerAccountId');
      assert.equal(refused.error.data.accountId, 1);
    }
    assert.equal(h.venue.position(1, OPTION), null);
    assert.equal(h.venue.instrument(OPTION)!.tradeSeq, 0);
    // A later block's own refusal names its place in the batch, and nothing is booked.
    const bad = h.run({ type: 'block_trade', ...block(2), batch: [{ ...block(9) }] });
    assert.equal(!bad.ok && bad.error.data.field, 'batch[0].makerAccountId');
    assert.equal(!bad.ok && bad.error.data.accountId, 9);
    assert.equal(h.venue.instrument(OPTION)!.tradeSeq, 0);

    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 1_000_000 });
    const booked = h.ok({ type: 'block_trade', ...block(2), batch: [block(3)] });
    assert.deepEqual(
      booked.trades!.map((t) => [t.blockTradeId, t.maker.accountId]),
      [
        ['BLOCK-1', 2],
        ['BLOCK-2', 3],
      ],
    );
    assert.equal(booked.blockTradeId, 'BLOCK-1');
    assert.equal(h.venue.position(1, OPTION)!.size, 20);
  });

  test('a batch counts a position as reducible once, not once per block', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    h.account(3);
    h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 50_000 }] });
    // Account 3 is long 1 BTC of the call; selling 2 BTC closes 1 and opens a 1 BTC short.
    h.ok({
      type: 'block_trade',
      takerAccountId: 3,
      makerAccountId: 2,
      legs: [{ instrumentName: OPTION, side: 'buy', amount: 10, price: 100 }],
    });
    const free = h.venue.accountSummary(3, 'BTC')!.availableFunds;
    h.ok({ type: 'withdraw', accountId: 3, currency: 'BTC', amount: free - 1_000_000 });
    const sell = (makerAccountId: number) => ({
      takerAccountId: 3,
      makerAccountId,
      legs: [{ instrumentName: OPTION, side: 'sell' as const, amount: 10, price: 100 }],
    });
    // Each block alone only reduces the position; together the second opens a short that needs
    // 15% of 1 BTC of margin, more than the 0.01 BTC left.
    const refused = h.run({ type: 'block_trade', ...sell(1), batch: [sell(2)] });
    assert.equal(!refused.ok && refused.error.name, 'not_enough_funds');
    assert.equal(h.venue.position(3, OPTION)!.size, 10);
    h.ok({ type: 'block_trade', ...sell(1) });
    assert.equal(h.venue.position(3, OPTION)!.size, 0);
  });

  test('a combo leg at a price its legs cannot split is refused: nothing booked on the combo, no negative fee', () => {
    const h = new Harness();
    listCombos(h, [STRADDLE]);
    h.account(1);
    h.account(2);
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: LOW_CALL, markPrice: 500 },
        { instrumentName: PUT, markPrice: 1700 },
      ],
    });
    const straddle = (price: number) => ({
      takerAccountId: 1,
      makerAccountId: 2,
      legs: [{ instrumentName: STRADDLE, side: 'buy' as const, amount: 10, price }],
    });
    // A straddle buys both legs, so it trades at one tick of each or more.
    for (const price of [-50, 0, 1]) {
      const alone = h.run({ type: 'block_trade', ...straddle(price) });
      assert.equal(!alone.ok && alone.error.name, 'invalid_price', String(price));
      assert.equal(!alone.ok && alone.error.data.field, 'legs[0].price');
      assert.equal(!alone.ok && alone.error.data.minPrice, '0.0002');
      const batched = h.run({ type: 'block_trade', ...straddle(2200), batch: [straddle(price)] });
      assert.equal(!batched.ok && batched.error.data.field, 'batch[0].legs[0].price');
    }
    assert.deepEqual(h.venue.positions(1), []);
    assert.equal(h.venue.instrument(STRADDLE)!.tradeSeq, 0);
    // At a price the legs split into, the trade is booked on the legs.
    const booked = h.ok({ type: 'block_trade', ...straddle(2200) });
    assert.deepEqual(
      h.venue
        .positions(1)
        .map((p) => [p.instrumentName, p.size])
        .sort(),
      [
        [LOW_CALL, 10],
        [PUT, 10],
      ],
    );
    assert.ok(booked.trades!.every((t) => t.taker.fee >= 0 && t.maker.fee >= 0));
  });
});
