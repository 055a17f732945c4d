/**
 * The desk itself refuses trade prices off the instrument's tick grid (the edge's check is a
 * courtesy): a quote's leg prices and hedge price, and an RFQ's hedge price, each naming its field.
 * Options of the harness have a tick of 0.0001 BTC below 0.005 and 0.0005 above it, so 501 ticks
 * (0.0501) is off the grid and 500 on it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { perpetualSpec } from '../../src/engine/testkit.ts';
import { DESK_A, type DeskResult, MAKER_A, quoteIdOf, RfqHarness, spreadLegs, TAKER } from './harness.ts';

/** A perpetual with a coarser tick above 100,000 ticks (50,000 USD): 5 ticks (2.5 USD). */
const STEPPED = 'BTC-STEPPED';

function withSteppedFuture(): RfqHarness {
  const h = new RfqHarness();
  h.engine.list(perpetualSpec({ name: STEPPED, tickSizeSteps: [{ abovePrice: '50000', tickSize: '2.5' }] }));
  return h;
}

function refusedAt(result: DeskResult, name: string, field: string): void {
  assert.equal(result.ok ? 'accepted' : result.error.name, name);
  assert.equal(!result.ok && result.error.data.field, field);
}

describe('prices off the tick grid are refused by the desk', () => {
  test("a quote's leg price, on create and on edit, naming the leg's field", () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    const command = h.quoteCommand(rfq);
    // The quote lists the 75000-C first: the field is the quote's own legs[0].
    const [call70, call75] = spreadLegs(500, 301);
    const refused = h.run({ ...command, legs: [call75!, call70!] });
    refusedAt(refused, 'off_grid', 'legs[0].price');
    assert.equal(!refused.ok && refused.error.data.tickSize, '0.0005');
    assert.equal(h.desk.quotesOfRfq(rfq.blockRfqId).length, 0);

    const quoteId = quoteIdOf(h.run(command));
    refusedAt(
      h.run({ ...command, type: 'rfq_quote_edit', quoteId, legs: spreadLegs(501, 300) } as never),
      'off_grid',
      'legs[0].price',
    );
    // Below 0.005 BTC the finest tick applies: 49 and 3 ticks are on the grid.
    h.ok({ ...command, type: 'rfq_quote_edit', quoteId, legs: spreadLegs(49, 3) } as never);
    assert.deepEqual(
      h.desk.quotesOfRfq(rfq.blockRfqId).map((q) => q.legs.map((l) => l.price)),
      [[49, 3]],
    );
  });

  test("an RFQ's hedge price and a quote's hedge price", () => {
    const h = withSteppedFuture();
    const hedge = { instrumentName: STEPPED, side: 'sell' as const, amount: 3, price: 120_001 };
    const create = h.createCommand({ hedge });
    refusedAt(h.run(create), 'off_grid', 'hedge.price');
    const rfq = h.callSpread({ hedge: { ...hedge, price: 120_000 } });
    h.at(h.now + 5_000);
    const command = h.quoteCommand(rfq);
    refusedAt(h.run({ ...command, hedge: { ...hedge, price: 119_998 } }), 'off_grid', 'hedge.price');
    quoteIdOf(h.run({ ...command, hedge: { ...hedge, price: 119_995 } }));
  });

  test('a quote on the grid trades at its prices', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    h.at(h.now + 5_000);
    quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 505, 300));
    const value = h.ok({
      type: 'rfq_accept',
      accountId: TAKER,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 205,
      quantity: null,
      timeInForce: 'fill_or_kill',
    });
    assert.equal(value.kind === 'accept' && value.trade?.fills.length, 1);
  });
});
