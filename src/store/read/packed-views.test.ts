import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { tradeView as contractTrade } from '../../../test/store/read-store-contract.ts';
import { comboTradeView } from '../../../test/support/combo-trade.ts';
import type { OrderView, TradeView } from '../../core/events.ts';
import { FLAG_API, Order } from '../../engine/order.ts';
import { orderViewText, parseOrderView, parseTradeView, tradeViewText } from './packed-views.ts';

function plainView(): OrderView {
  const order = new Order(
    '1000001',
    1,
    3,
    7,
    'BTC-PERPETUAL',
    'BTC',
    'buy',
    'limit',
    300_000,
    10,
    'immediate_or_cancel',
    1_732_486_000_000,
    '',
    null,
    FLAG_API,
  );
  order.state = 'cancelled';
  return order.toView();
}

test('an engine view reads back equal, in a third of the bytes of the object form', () => {
  const view = plainView();
  const text = orderViewText(view);
  assert.deepEqual(parseOrderView(text), view);
  assert.ok(
    text.length * 2 < JSON.stringify(view).length,
    `${text.length} vs ${JSON.stringify(view).length}`,
  );
});

/** The read-store contract's trade, with a quoted label, a fractional index and the maker's RFQ id set. */
function tradeView(): TradeView {
  const trade = contractTrade('BTC-1', 1_732_486_000_000, 3, 4);
  return { ...trade, indexPrice: 30_000.5, makerBlockRfqId: null, taker: { ...trade.taker, label: 'x"y' } };
}

test('a trade view with both parties reads back equal, in well under half the bytes', () => {
  const view = tradeView();
  const text = tradeViewText(view);
  assert.deepEqual(parseTradeView(text), view);
  assert.deepEqual(parseTradeView(JSON.stringify(view)), view);
  assert.ok(
    text.length * 2 < JSON.stringify(view).length,
    `${text.length} vs ${JSON.stringify(view).length}`,
  );
});

const anyValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x)),
  fc.string(),
  fc.array(fc.string(), { maxLength: 3 }),
);
const recordOf = (fields: readonly string[]) =>
  fc
    .tuple(...fields.map(() => anyValue))
    .map((values) => Object.fromEntries(fields.map((f, i) => [f, values[i]])));

test('any values in every field read back equal (property)', () => {
  const orderFields = Object.keys(plainView());
  const tradeFields = Object.keys(tradeView()).filter((f) => f !== 'taker' && f !== 'maker');
  const partyFields = Object.keys(tradeView().taker);
  fc.assert(
    fc.property(recordOf(orderFields), (view) => {
      assert.deepEqual(parseOrderView(orderViewText(view as unknown as OrderView)), view);
    }),
    { numRuns: 200 },
  );
  fc.assert(
    fc.property(recordOf(tradeFields), recordOf(partyFields), recordOf(partyFields), (top, taker, maker) => {
      const view = { ...top, taker, maker } as unknown as TradeView;
      assert.deepEqual(parseTradeView(tradeViewText(view)), view);
    }),
    { numRuns: 200 },
  );
});

test('object-form rows read back as written; a row packed before a field was added reads it as null', () => {
  const view = plainView();
  assert.deepEqual(parseOrderView(JSON.stringify(view)), view);
  const older = JSON.parse(orderViewText({ ...view, riskReducing: true })) as unknown[];
  older.pop();
  assert.equal(parseOrderView(JSON.stringify(older)).riskReducing, null);
});

test('an unknown layout is refused', () => {
  const packed = JSON.parse(orderViewText(plainView())) as unknown[];
  packed[0] = 2;
  assert.throws(() => parseOrderView(JSON.stringify(packed)), /unknown layout 2/);
});

test('a combo trade reads back with its legs; comboId, comboTradeId and legs stay absent elsewhere', () => {
  const combo = comboTradeView();
  const text = tradeViewText(combo);
  assert.deepEqual(parseTradeView(text), combo);
  const leg = combo.legs![0]!;
  assert.deepEqual(parseTradeView(tradeViewText(leg)), leg);
  const plain = parseTradeView(tradeViewText(tradeView()));
  for (const field of ['comboId', 'comboTradeId', 'legs']) assert.equal(field in plain, false, field);
  // A row packed before the fields were added lacks them, and reads back without them.
  const older = JSON.parse(tradeViewText(tradeView())) as unknown[];
  older.splice(-3);
  assert.deepEqual(parseTradeView(JSON.stringify(older)), tradeView());
});

test("a Block RFQ trade's allocations read back; rows packed before them read back without them", () => {
  const allocations = [
    { amount: '12.5', userId: 3 },
    { amount: '5', clientInfo: { clientId: 7, clientLinkId: 8, name: null } },
  ];
  const view: TradeView = { ...tradeView(), underlyingPrice: 60_100, tradeAllocations: allocations };
  assert.deepEqual(parseTradeView(tradeViewText(view)), view);
  // A combo's trade carries them, its leg trades do not.
  const combo: TradeView = { ...comboTradeView(), tradeAllocations: allocations };
  const read = parseTradeView(tradeViewText(combo));
  assert.deepEqual(read, combo);
  for (const leg of read.legs!) assert.equal('tradeAllocations' in leg, false);
  assert.equal('tradeAllocations' in parseTradeView(tradeViewText(tradeView())), false);
  // A row packed before the field was appended ends at `underlyingPrice`.
  const older = JSON.parse(tradeViewText({ ...tradeView(), underlyingPrice: 60_100 })) as unknown[];
  older.pop();
  assert.equal(older.at(-1), 60_100);
  assert.deepEqual(parseTradeView(JSON.stringify(older)), { ...tradeView(), underlyingPrice: 60_100 });
});
