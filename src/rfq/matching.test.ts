import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crosses, planFills, rankQuotes } from './matching.ts';
import { quoteRecord as quote } from './testkit.ts';

test('ranking: best price, then AON, then time; only crossing quotes of the other side', () => {
  const quotes = [
    quote(1, 'sell', 100, 5),
    quote(2, 'sell', 100, 5, true),
    quote(3, 'sell', 90, 5),
    quote(4, 'sell', 120, 5),
    quote(5, 'buy', 95, 5),
  ];
  assert.deepEqual(
    rankQuotes(quotes, 'buy', 110, 0).map((q) => q.quoteId),
    ['3', '2', '1'],
  );
  assert.deepEqual(
    rankQuotes(quotes, 'sell', 90, 0).map((q) => q.quoteId),
    ['5'],
  );
});

test('time priority: same price and instruction, the lower priority ranks first', () => {
  const later = { ...quote(1, 'sell', 100, 5), priority: 7 };
  const earlier = { ...quote(2, 'sell', 100, 5), priority: 3 };
  assert.deepEqual(
    rankQuotes([later, earlier], 'buy', 110, 0).map((q) => q.quoteId),
    ['2', '1'],
  );
  const laterAon = { ...quote(3, 'sell', 100, 5, true), priority: 9 };
  const earlierAon = { ...quote(4, 'sell', 100, 5, true), priority: 4 };
  assert.deepEqual(
    rankQuotes([laterAon, earlierAon], 'buy', 110, 0).map((q) => q.quoteId),
    ['4', '3'],
  );
});

test('planning: AON fills whole or is skipped; partial quotes top up', () => {
  const ranked = [quote(1, 'sell', 90, 8, true), quote(2, 'sell', 95, 3), quote(3, 'sell', 99, 10)];
  assert.deepEqual(
    planFills(ranked, 5).fills.map((f) => [f.quote.quoteId, f.quantity]),
    [
      ['2', 3],
      ['3', 2],
    ],
  );
  assert.deepEqual(
    planFills(ranked, 10).fills.map((f) => [f.quote.quoteId, f.quantity]),
    [
      ['1', 8],
      ['2', 2],
    ],
  );
  assert.equal(planFills([quote(1, 'sell', 90, 8, true)], 5).covered, 0);
});

test('crosses: a quote exactly at the taker limit crosses on both sides', () => {
  assert.equal(crosses('buy', 200, 200), true, 'a buy taker at limit 200 takes an ask of 200');
  assert.equal(crosses('buy', 200, 201), false, 'a buy taker at limit 200 does not take an ask of 201');
  assert.equal(crosses('sell', 200, 200), true, 'a sell taker at limit 200 hits a bid of 200');
  assert.equal(crosses('sell', 200, 199), false, 'a sell taker at limit 200 does not hit a bid of 199');
});
