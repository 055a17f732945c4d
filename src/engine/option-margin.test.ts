import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HIGH_CALL, LOW_CALL, listCombos, PUT, SPREAD } from './combo-testkit.ts';
import { Harness, optionSpec, orderCommand } from './testkit.ts';

// Inverse options of lot 0.1 BTC priced in 0.0001 BTC: 10 lots at 100 ticks are 1,000,000 sat.
// The naked margin of 10 lots (1 BTC) is 15% of 1 BTC: 15,000,000 sat. A taker fee on 10 lots
// is 0.03% of 1 BTC: 30,000 sat.
const FUNDS = 100_000_000;
const NAKED = 15_000_000;
const FEE = 30_000;
const LOW_PUT = 'BTC-27DEC26-65000-P';

/** Accounts 1 (the counterparty, rich) and 2 (FUNDS sat), the 27DEC26 legs marked at 60,000. */
function venue(): Harness {
  const h = new Harness();
  listCombos(h, [SPREAD]);
  h.list(optionSpec({ name: LOW_PUT, optionType: 'put', strike: '65000' }));
  h.account(1);
  h.account(2, { BTC: FUNDS });
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: LOW_CALL, markPrice: 500 },
      { instrumentName: HIGH_CALL, markPrice: 300 },
      { instrumentName: PUT, markPrice: 900 },
      { instrumentName: LOW_PUT, markPrice: 600 },
    ],
  });
  return h;
}

/** Account 2 trades 10 lots of `instrumentName` at `price` against a resting order of account 1. */
function trade(h: Harness, side: 'buy' | 'sell', instrumentName: string, price: number): void {
  h.ok(orderCommand(1, side === 'buy' ? 'sell' : 'buy', 10, price, { instrumentName }));
  const result = h.order(2, side, 10, price, { instrumentName });
  assert.ok(result.ok && result.trades!.length === 1, JSON.stringify(result));
}

const summary = (h: Harness) => h.venue.accountSummary(2, 'BTC')!;

/** Account 2 holds a bought call spread: long the 70,000 call and short the 75,000, 10 lots each. */
function holdBoughtSpread(h: Harness): void {
  trade(h, 'buy', LOW_CALL, 500);
  trade(h, 'sell', HIGH_CALL, 300);
}

/** Block-trade legs of 10 lots at the marks: the call spread bought (`buy`) or sold. */
function spreadBlockLegs(side: 'buy' | 'sell') {
  return [
    { instrumentName: LOW_CALL, side, amount: 10, price: 500 },
    {
      instrumentName: HIGH_CALL,
      side: side === 'buy' ? ('sell' as const) : ('buy' as const),
      amount: 10,
      price: 300,
    },
  ];
}

describe('long options are paid in full and are no collateral', () => {
  test('a bought option counts in equity, not in the funds that buy the next one', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1);
    h.account(2, { BTC: 1_500_000 });
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 50_000 }],
      markPrices: [{ instrumentName: LOW_CALL, markPrice: 100 }],
    });
    h.order(1, 'sell', 30, 100, { instrumentName: LOW_CALL });
    assert.ok(h.order(2, 'buy', 10, 100, { instrumentName: LOW_CALL }).ok);
    const after = summary(h);
    assert.equal(after.balance, 1_500_000 - 1_000_000 - FEE);
    assert.equal(after.equity, after.balance + 1_000_000);
    assert.equal(after.marginBalance, after.balance);
    assert.equal(after.availableFunds, after.balance);
    // Before, the first option's value paid for the second and the balance went negative.
    const second = h.order(2, 'buy', 10, 100, { instrumentName: LOW_CALL });
    assert.equal(!second.ok && second.error.name, 'not_enough_funds');
    assert.equal(summary(h).balance, after.balance);
  });
});

describe('option spread offsets on positions', () => {
  test('a bought call spread needs no margin: it uses exactly its debit', () => {
    const h = venue();
    holdBoughtSpread(h);
    const s = summary(h);
    assert.equal(s.balance, FUNDS - 5_000_000 + 3_000_000 - 2 * FEE);
    assert.equal(s.positionMargin, 0);
    // The long's 5,000,000 covers the short's 3,000,000 liability; the other 2,000,000 is no collateral.
    assert.equal(s.equity, s.balance + 2_000_000);
    assert.equal(s.marginBalance, s.balance);
    assert.equal(s.availableFunds, FUNDS - 2_000_000 - 2 * FEE);
  });

  test('a sold call spread needs its width at the long strike, in coin, not the naked margin', () => {
    const h = venue();
    trade(h, 'sell', LOW_CALL, 500);
    trade(h, 'buy', HIGH_CALL, 300);
    const s = summary(h);
    // 1 BTC × (75,000 − 70,000) / 75,000, rounded up.
    assert.equal(s.positionMargin, 6_666_667);
    assert.equal(s.equity, s.balance - 2_000_000);
    assert.equal(s.marginBalance, s.equity);
    assert.equal(s.availableFunds, FUNDS - 2 * FEE - 6_666_667);
  });

  test('a sold coin-settled put spread keeps its naked margin: its coin loss has no bound', () => {
    const h = venue();
    trade(h, 'sell', PUT, 900);
    trade(h, 'buy', LOW_PUT, 600);
    const s = summary(h);
    assert.equal(s.positionMargin, NAKED);
    // The long put covers nothing, so its value is no collateral either.
    assert.equal(s.marginBalance, s.balance - 9_000_000);
  });

  test('a short covered by a long of another type or expiry stays naked', () => {
    const h = venue();
    trade(h, 'sell', HIGH_CALL, 300);
    trade(h, 'buy', PUT, 900);
    assert.equal(summary(h).positionMargin, NAKED);
  });

  test('selling a long that covers a short is no mere reduction: the short needs its margin', () => {
    const h = venue();
    holdBoughtSpread(h);
    const before = summary(h).availableFunds;
    // Without cover the short needs its naked margin, and the long no longer offsets its
    // 3,000,000 liability: the position margin carries that from the moment the sale is placed.
    assert.ok(h.order(2, 'sell', 10, 600, { instrumentName: LOW_CALL }).ok);
    assert.equal(summary(h).positionMargin, NAKED);
    assert.equal(before - summary(h).availableFunds, NAKED + 3_000_000 + FEE);
    h.ok({ type: 'cancel_all', accountId: 2 });
    // Once the short is bought back, the long covers nothing and selling it is a reduction again.
    trade(h, 'buy', HIGH_CALL, 300);
    const free = summary(h).availableFunds;
    assert.ok(h.order(2, 'sell', 10, 600, { instrumentName: LOW_CALL }).ok);
    assert.equal(free - summary(h).availableFunds, FEE);
    h.venue.validate();
  });

  test('the funds check counts the margin a sale of the covering long brings: refused when it does not fit', () => {
    const h = venue();
    holdBoughtSpread(h);
    // Left with the short's naked margin only: the sale needs the lost offset and its fee too.
    h.ok({ type: 'withdraw', accountId: 2, currency: 'BTC', amount: summary(h).availableFunds - NAKED });
    const hash = h.venue.stateHash();
    const refused = h.order(2, 'sell', 10, 600, { instrumentName: LOW_CALL });
    assert.equal(refused.ok ? 'accepted' : refused.error.name, 'not_enough_funds');
    assert.equal(h.venue.stateHash(), hash);
    assert.equal(summary(h).availableFunds, NAKED);
    // With exactly what it needs, it rests and leaves nothing.
    h.ok({ type: 'deposit', accountId: 2, currency: 'BTC', amount: 3_000_000 + FEE });
    assert.ok(h.order(2, 'sell', 10, 600, { instrumentName: LOW_CALL }).ok);
    assert.equal(summary(h).availableFunds, 0);
    h.venue.validate();
  });

  test('buying back a covered short costs the offset its long gave; a naked one only the fee', () => {
    const h = venue();
    holdBoughtSpread(h);
    const before = summary(h).availableFunds;
    // The long's value offset the short's 3,000,000 liability; with the short gone it backs nothing.
    assert.ok(h.order(2, 'buy', 10, 300, { instrumentName: HIGH_CALL }).ok);
    assert.equal(before - summary(h).availableFunds, 3_000_000 + FEE);
    const naked = venue();
    trade(naked, 'sell', HIGH_CALL, 300);
    const free = summary(naked).availableFunds;
    assert.ok(naked.order(2, 'buy', 10, 300, { instrumentName: HIGH_CALL }).ok);
    assert.equal(free - summary(naked).availableFunds, FEE);
  });

  test('selling an option below its mark reserves the loss against the mark too', () => {
    const h = venue();
    const before = summary(h).availableFunds;
    assert.ok(h.order(2, 'sell', 10, 200, { instrumentName: HIGH_CALL }).ok);
    // Marked at 300, the short is worth 3,000,000 against the 2,000,000 it brings.
    assert.equal(before - summary(h).availableFunds, NAKED + 1_000_000 + FEE);
  });

  test('a long that an open order would sell covers nothing', () => {
    const h = venue();
    trade(h, 'buy', LOW_CALL, 500);
    // Selling the long while it covers nothing is a reduction: the fee only.
    const sale = h.order(2, 'sell', 10, 900, { instrumentName: LOW_CALL }).order!.orderId;
    trade(h, 'sell', HIGH_CALL, 300);
    // Were the short covered now, the sale could leave it naked with nothing held for it.
    assert.equal(summary(h).positionMargin, NAKED);
    h.ok({ type: 'cancel_order', accountId: 2, orderId: sale });
    assert.equal(summary(h).positionMargin, 0);
    h.venue.validate();
  });

  test('a resting combo that closes a held spread uncovers its short until it fills', () => {
    const h = venue();
    assert.ok(h.order(1, 'sell', 10, 200, { instrumentName: SPREAD }).ok);
    assert.ok(h.order(2, 'buy', 10, 200, { instrumentName: SPREAD }).ok);
    assert.equal(summary(h).positionMargin, 0);
    const before = summary(h).availableFunds;
    // The combo sells the covering long and buys the short back, but not until it fills.
    const closing = h.order(2, 'sell', 10, 250, { instrumentName: SPREAD });
    assert.ok(closing.ok && closing.order!.orderState === 'open');
    // Its own reserve is 0: filled, it gets 2,500,000 net for the spread, more than its fees.
    assert.equal(summary(h).orderMargin, 0);
    assert.equal(before - summary(h).availableFunds, NAKED + 3_000_000);
    // Filled, it leaves nothing to margin.
    assert.ok(h.order(1, 'buy', 10, 250, { instrumentName: SPREAD }).ok);
    assert.equal(summary(h).positionMargin, 0);
    assert.equal(summary(h).orderMargin, 0);
    h.venue.validate();
  });

  test('a block trade that closes a held spread needs only its fees', () => {
    const h = venue();
    holdBoughtSpread(h);
    const legs = spreadBlockLegs('sell');
    // Both legs only reduce, the short bought back with the long that covered it: the fees will do.
    const s = summary(h);
    h.ok({ type: 'withdraw', accountId: 2, currency: 'BTC', amount: s.availableFunds - 2 * FEE });
    h.ok({ type: 'block_trade', takerAccountId: 2, makerAccountId: 1, legs });
    assert.equal(summary(h).positionMargin, 0);
    h.venue.validate();
  });

  test('closing the covering long brings the naked margin back', () => {
    const h = venue();
    holdBoughtSpread(h);
    assert.equal(summary(h).positionMargin, 0);
    trade(h, 'sell', LOW_CALL, 500);
    assert.equal(summary(h).positionMargin, NAKED);
    h.venue.validate();
  });
});

describe('spread offsets on orders traded together', () => {
  test('a call-spread combo order reserves its net debit and fees, not premium plus naked margin', () => {
    const h = venue();
    const before = summary(h).availableFunds;
    assert.ok(h.order(2, 'buy', 10, 200, { instrumentName: SPREAD }).ok);
    // Legs at their marks (500 and 300): 5,000,000 premium less the 3,000,000 the short brings.
    assert.equal(before - summary(h).availableFunds, 2_000_000 + 2 * FEE);
  });

  test('selling the call-spread combo reserves the spread width, not the naked margin', () => {
    const h = venue();
    const before = summary(h).availableFunds;
    assert.ok(h.order(2, 'sell', 10, 200, { instrumentName: SPREAD }).ok);
    // The long 75,000 call's 3,000,000 offsets as much of the short 70,000 call's 5,000,000.
    assert.equal(before - summary(h).availableFunds, 6_666_667 + 3_000_000 - 3_000_000 + 2 * FEE);
  });

  test('a two-leg block trade is funded as the spread it is', () => {
    const h = venue();
    const legs = spreadBlockLegs('buy');
    h.ok({ type: 'withdraw', accountId: 2, currency: 'BTC', amount: FUNDS - 2_000_000 - 2 * FEE });
    // Exactly the debit and the taker fees: per leg it would need 5,000,000 + 15,000,000.
    h.ok({ type: 'block_trade', takerAccountId: 2, makerAccountId: 1, legs });
    assert.equal(summary(h).balance, 0);
    assert.equal(summary(h).availableFunds, 0);
    h.venue.validate();
  });

  test('a block trade one satoshi short of the debit is refused and books nothing', () => {
    const h = venue();
    h.ok({ type: 'withdraw', accountId: 2, currency: 'BTC', amount: FUNDS - 2_000_000 - 2 * FEE + 1 });
    const refused = h.run({
      type: 'block_trade',
      takerAccountId: 2,
      makerAccountId: 1,
      legs: spreadBlockLegs('buy'),
    });
    assert.equal(!refused.ok && refused.error.name, 'not_enough_funds');
    assert.equal(!refused.ok && refused.error.data.required, 2_000_000 + 2 * FEE);
    assert.equal(h.venue.position(2, LOW_CALL), null);
  });
});

describe('a combo that sells a long the account holds', () => {
  // The combo buys the 70,000 call and sells the 75,000 call, which account 2 holds: the sale
  // pays part of the bought leg when both fill, so 10 lots need the 2,000,000 net, not 5,000,000.
  const NET_RESERVE = 2_000_000 + 2 * FEE;

  test('reserves its net debit when placed', () => {
    const h = venue();
    trade(h, 'buy', HIGH_CALL, 300);
    const before = summary(h).availableFunds;
    assert.ok(h.order(2, 'buy', 10, 200, { instrumentName: SPREAD }).ok);
    assert.equal(summary(h).orderMargin, NET_RESERVE);
    assert.equal(before - summary(h).availableFunds, NET_RESERVE);
    h.venue.validate();
  });

  test('a partial fill after a block trade made it sell a held long releases its share (seed 1381717065)', () => {
    const h = venue();
    assert.ok(h.order(2, 'buy', 10, 200, { instrumentName: SPREAD }).ok);
    assert.equal(summary(h).orderMargin, NET_RESERVE);
    // A block trade leaves account 2 long the call its resting combo sells (and short a put).
    h.ok({
      type: 'block_trade',
      takerAccountId: 2,
      makerAccountId: 1,
      legs: [
        { instrumentName: LOW_PUT, side: 'sell', amount: 10, price: 600 },
        { instrumentName: HIGH_CALL, side: 'buy', amount: 10, price: 300 },
      ],
    });
    h.ok({ type: 'withdraw', accountId: 2, currency: 'BTC', amount: summary(h).availableFunds });
    assert.equal(summary(h).availableFunds, 0);
    // 4 of the 10 lots fill: the 6 left need 6/10 of the net, and the funds stay at 0, not below.
    assert.ok(h.order(1, 'sell', 4, 200, { instrumentName: SPREAD, timeInForce: 'immediate_or_cancel' }).ok);
    assert.equal(summary(h).orderMargin, (NET_RESERVE * 6) / 10);
    assert.ok(summary(h).availableFunds >= 0, `available ${summary(h).availableFunds}`);
    h.venue.validate();
  });
});
