/**
 * A combo order's bought option leg covers its sold leg by the long's marked value, not its split
 * price, when it trades above its mark (risk.ts `legsReserve`): once booked the long is marked, and
 * covers only that. The combo split puts a leg marked below one tick at one tick.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HIGH_CALL, LOW_CALL, listCombos, SPREAD } from './combo-testkit.ts';
import { Harness, orderCommand } from './testkit.ts';

function summary(h: Harness, accountId: number) {
  return h.venue.accountSummary(accountId, 'BTC')!;
}

/** Account 1 holding exactly what its resting order of `side` SPREAD at `price` reserves. */
function exactlyFunded(h: Harness, side: 'buy' | 'sell', lots: number, price: number): void {
  const order = orderCommand(1, side, lots, price, { instrumentName: SPREAD });
  h.ok(order);
  const reserved = summary(h, 1).orderMargin;
  h.ok({ type: 'cancel_all', accountId: 1 });
  const surplus = summary(h, 1).availableFunds - reserved;
  if (surplus > 0) h.ok({ type: 'withdraw', accountId: 1, currency: 'BTC', amount: surplus });
  h.ok(order);
  assert.equal(summary(h, 1).availableFunds, 0);
}

test('a combo sold with its long leg split above a zero mark leaves the account at zero, not below', () => {
  const h = new Harness();
  listCombos(h, [SPREAD]);
  h.account(1, { BTC: 1_000_000_000 });
  h.account(2);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: LOW_CALL, markPrice: 500 },
      { instrumentName: HIGH_CALL, markPrice: 0 },
    ],
  });
  // Selling the spread at 0.0499 sells the 70,000 call at its mark and buys the 75,000 call at one
  // tick above its zero mark: marked at zero, it offsets none of the short's liability.
  exactlyFunded(h, 'sell', 250, 499);
  h.ok(orderCommand(2, 'buy', 250, 499, { instrumentName: SPREAD }));
  assert.equal(h.venue.position(1, HIGH_CALL)!.size, 250);
  assert.ok(summary(h, 1).availableFunds >= 0, `available ${summary(h, 1).availableFunds}`);
});

test('a combo bought before its legs are marked: the unmarked long covers nothing once booked', () => {
  const h = new Harness();
  listCombos(h, [SPREAD]);
  h.account(1, { BTC: 1_000_000_000 });
  for (const id of [2, 3]) h.account(id);
  h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
  // Last prices, no marks: 0.05 for the 70,000 call, 0.03 for the 75,000 call.
  for (const [name, price] of [
    [LOW_CALL, 500],
    [HIGH_CALL, 300],
  ] as const) {
    h.ok(orderCommand(2, 'sell', 10, price, { instrumentName: name }));
    h.ok(orderCommand(3, 'buy', 10, price, { instrumentName: name }));
  }
  // Buying the spread at 0.02 buys the 70,000 call at 0.05 and sells the 75,000 call at 0.03.
  exactlyFunded(h, 'buy', 250, 200);
  h.ok(orderCommand(2, 'sell', 250, 200, { instrumentName: SPREAD }));
  assert.equal(h.venue.position(1, LOW_CALL)!.size, 250);
  assert.ok(summary(h, 1).availableFunds >= 0, `available ${summary(h, 1).availableFunds}`);
});
