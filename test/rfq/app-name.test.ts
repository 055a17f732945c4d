/**
 * `appName` on quote objects (spec 2.8: "Example responses also carry `appName` (string) on
 * quotes"): the name of the desk that placed the quote, derived from the quote record when it is
 * shown, so snapshots and journals carry nothing new. Quote objects reach their own desk only;
 * the taker's bids and asks are not quote objects, and an anonymous RFQ's still say `ANONYMOUS`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { quoteToWire, rfqToWire } from '../../src/api/wire/rfq.ts';
import type { RfqRecord } from '../../src/rfq/types.ts';
import { DESK_A, DESK_B, MAKER_A, MAKER_B, quoteIdOf, RfqHarness, TAKER } from './harness.ts';

const FIVE_DESKS = [DESK_A, DESK_B, 'desk-c', 'desk-d', 'desk-e'];

const lookup = (h: RfqHarness) => (name: string) => h.venue.instrument(name)?.instrument;

function quoteWire(h: RfqHarness, quoteId: string) {
  const quote = h.desk.quote(quoteId)!;
  return quoteToWire(quote, h.desk.makerRfq(quote.desk, quote.makerRfqId)!, lookup(h));
}

function views(h: RfqHarness, rfq: RfqRecord) {
  const now = h.desk.takerRfq(new Set([TAKER]), rfq.blockRfqId)!;
  const quotes = h.desk.quotesOfRfq(rfq.blockRfqId);
  return {
    taker: rfqToWire(now, quotes, { role: 'taker' }, lookup(h)),
    deskA: rfqToWire(now, quotes, { role: 'maker', desk: DESK_A }, lookup(h)),
    deskB: rfqToWire(now, quotes, { role: 'maker', desk: DESK_B }, lookup(h)),
  };
}

describe('appName on quotes', () => {
  test('each quote names the desk that placed it, in the quote answer and the maker view', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const b = quoteIdOf(h.quote(rfq, DESK_B, MAKER_B, 'sell', 10, 505, 300));
    assert.equal(quoteWire(h, a).appName, DESK_A);
    assert.equal(quoteWire(h, b).appName, DESK_B);
    const { deskA, deskB } = views(h, rfq);
    assert.deepEqual(
      deskA.quotes!.map((q) => [q.quoteId, q.appName]),
      [[a, DESK_A]],
    );
    assert.deepEqual(
      deskB.quotes!.map((q) => [q.quoteId, q.appName]),
      [[b, DESK_B]],
    );
  });

  test('an anonymous RFQ: the desk sees its own name, the taker sees no quote object and no desk', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread({ disclosed: false, makers: [], targetDesks: FIVE_DESKS });
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    h.at(h.now + 5_000);
    const { taker, deskA, deskB } = views(h, rfq);
    assert.deepEqual(
      deskA.quotes!.map((q) => [q.quoteId, q.appName]),
      [[a, DESK_A]],
    );
    assert.deepEqual(deskB.quotes, []);
    assert.equal(taker.quotes, undefined);
    assert.deepEqual(
      taker.asks!.map((entry) => entry.makers),
      [['ANONYMOUS']],
    );
    const shown = JSON.stringify(taker);
    assert.ok(!shown.includes('appName'), shown);
    assert.ok(!shown.includes(DESK_A), shown);
  });

  test('a restored desk shows the same appName: nothing new is saved', () => {
    const h = new RfqHarness();
    const rfq = h.callSpread();
    const a = quoteIdOf(h.quote(rfq, DESK_A, MAKER_A, 'sell', 10, 500, 300));
    const hash = h.desk.stateHash();
    h.desk.restore(JSON.parse(JSON.stringify(h.desk.snapshot())));
    assert.equal(h.desk.stateHash(), hash);
    assert.equal(quoteWire(h, a).appName, DESK_A);
  });
});
