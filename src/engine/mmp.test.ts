import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import { createCombo } from '../market/combos.ts';
import { AdvancedHarness, errorOf, orderOf } from './advanced-testkit.ts';
import { optionSpec, perpetualSpec } from './testkit.ts';
import { Venue } from './venue.ts';

/** A venue listing one call, marked at 500 with delta 0.5 and vega 20, the index at 50,000 USD. */
function markedOption() {
  const h = new AdvancedHarness();
  h.list(optionSpec());
  const option = 'BTC-27DEC26-70000-C';
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 50_000 }],
    markPrices: [{ instrumentName: option, markPrice: 500, delta: 0.5, vega: 20 }],
  });
  return { h, option };
}

function config(h: AdvancedHarness, more: Record<string, unknown> = {}) {
  return h.ok({
    type: 'set_mmp_config',
    accountId: 1,
    indexName: 'btc_usd',
    interval: 10,
    frozenTime: 5,
    quantityLimit: 500,
    ...more,
  });
}

describe('market maker protection', () => {
  test('a quantity breach cancels every MMP order (mmp_trigger, mmpCancelled) and freezes the group', () => {
    const h = new AdvancedHarness();
    config(h, { quantityLimit: 250 });
    const a = orderOf(h.ok(h.orderCommand(1, 'sell', 30, 100_000, { mmp: true })));
    const b = orderOf(h.ok(h.orderCommand(1, 'buy', 30, 99_000, { mmp: true })));
    const plain = orderOf(h.ok(h.orderCommand(1, 'buy', 30, 98_000)));
    // 25 lots × 10 USD = 250 USD: at the limit, not above it.
    h.ok(h.orderCommand(2, 'buy', 25, 100_000));
    assert.equal(h.get(b.orderId).orderState, 'open');
    h.ts += 1000;
    const breach = h.ok(h.orderCommand(2, 'buy', 1, 100_000));
    assert.deepEqual(
      breach.events.filter((e) => e.type === 'mmp_trigger'),
      [{ type: 'mmp_trigger', accountId: 1, indexName: 'btc_usd', frozenUntil: h.ts + 5000 }],
    );
    for (const id of [a.orderId, b.orderId]) {
      const view = h.get(id);
      assert.equal(view.orderState, 'cancelled');
      assert.equal(view.cancelReason, 'mmp_trigger');
      assert.equal(view.mmpCancelled, true);
    }
    assert.equal(h.get(plain.orderId).orderState, 'open');
    const fired = h.venue.execute({ type: 'timer', seq: ++h.seq, ts: h.ts });
    assert.deepEqual(fired.events, []);
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_trigger');
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000))), null);
    const [status] = h.venue.mmpConfig(1, 'btc_usd');
    assert.equal(status!.frozenUntil, h.ts + 5000);
    h.ts += 5000;
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), null);
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('fills older than the interval drop out of the window', () => {
    const h = new AdvancedHarness();
    config(h);
    h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true }));
    h.ok(h.orderCommand(2, 'buy', 40, 100_000));
    h.ts += 11_000;
    h.ok(h.orderCommand(2, 'buy', 40, 100_000));
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '400');
    assert.equal(h.venue.mmpConfig(1)[0]!.frozenUntil, null);
  });

  test('the config read counts only the fills inside the interval, with no fill since to trim them', () => {
    const h = new AdvancedHarness();
    config(h);
    h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true }));
    h.ok(h.orderCommand(2, 'buy', 40, 100_000));
    h.ts += 9_999;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '400');
    h.ts += 1;
    h.ok({ type: 'timer' } as never);
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '0');
  });

  test('a fill exactly one interval old has left the window', () => {
    const h = new AdvancedHarness();
    config(h);
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true })));
    h.ok(h.orderCommand(2, 'buy', 30, 100_000));
    // 300 USD now and 300 USD at exactly 10 s later: 600 would be above 500, but the first is out.
    h.ts += 10_000;
    h.ok(h.orderCommand(2, 'buy', 30, 100_000));
    const [status] = h.venue.mmpConfig(1);
    assert.deepEqual([status!.quantity, status!.frozenUntil], ['300', null]);
    assert.equal(h.get(quote.orderId).orderState, 'open');
  });

  test("a breach cancels the account's MMP orders in its currency only", () => {
    const h = new AdvancedHarness();
    h.list(perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', settlementCurrency: 'ETH' }));
    for (const accountId of [1, 2])
      h.ok({ type: 'deposit', accountId, currency: 'ETH', amount: 100_000_000_000 });
    for (const indexName of ['btc_usd', 'eth_usd']) config(h, { indexName, quantityLimit: 100 });
    const btc = orderOf(h.ok(h.orderCommand(1, 'sell', 30, 100_000, { mmp: true })));
    const eth = orderOf(
      h.ok({ ...h.orderCommand(1, 'sell', 30, 100_000, { mmp: true }), instrumentName: 'ETH-PERPETUAL' }),
    );
    // 110 USD > 100 on btc_usd.
    const breach = h.ok(h.orderCommand(2, 'buy', 11, 100_000));
    assert.deepEqual(
      breach.events.flatMap((e) => (e.type === 'mmp_trigger' ? [e.indexName] : [])),
      ['btc_usd'],
    );
    assert.equal(h.get(btc.orderId).cancelReason, 'mmp_trigger');
    assert.equal(h.get(eth.orderId).orderState, 'open');
    assert.equal(h.venue.mmpConfig(1, 'eth_usd')[0]!.frozenUntil, null);
    h.venue.validate();
  });

  test('frozenTime 0 freezes until reset_mmp; interval 0 removes the config', () => {
    const h = new AdvancedHarness();
    config(h, { frozenTime: 0, quantityLimit: 10 });
    h.ok(h.orderCommand(1, 'sell', 5, 100_000, { mmp: true }));
    h.ok(h.orderCommand(2, 'buy', 2, 100_000));
    h.ts += 3_600_000;
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_trigger');
    h.ok({ type: 'reset_mmp', accountId: 1, indexName: 'btc_usd' });
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), null);
    config(h, { interval: 0 });
    assert.deepEqual(h.venue.mmpConfig(1), []);
    assert.equal(errorOf(h.run({ type: 'reset_mmp', accountId: 1, indexName: 'btc_usd' })), 'not_found');
  });

  describe('the quantity sum is exact (decimal lots, not float sums)', () => {
    const option = 'BTC-27DEC26-70000-C';
    /** An option MMP quote of account 1 and a BTC config with this quantity limit (BTC). */
    function optionQuote(quantityLimit: number) {
      const h = new AdvancedHarness();
      h.list(optionSpec());
      config(h, { quantityLimit });
      const quote = orderOf(
        h.ok({ ...h.orderCommand(1, 'sell', 100, 500, { mmp: true }), instrumentName: option }),
      );
      const fill = (lots: number) => h.ok({ ...h.orderCommand(2, 'buy', lots, 500), instrumentName: option });
      return { h, quote, fill };
    }

    test('0.2 + 0.1 BTC against a limit of 0.3 is at the limit, not above: no freeze; quantity reads 0.3', () => {
      const { h, quote, fill } = optionQuote(0.3);
      fill(2);
      fill(1);
      assert.equal(h.get(quote.orderId).orderState, 'open');
      const [status] = h.venue.mmpConfig(1);
      assert.equal(status!.quantity, '0.3');
      assert.equal(status!.frozenUntil, null);
      assert.equal(h.replayHash(), h.venue.stateHash());
    });

    test('0.2 + 0.1 + 0.1 BTC against 0.3 freezes', () => {
      const { h, quote, fill } = optionQuote(0.3);
      fill(2);
      fill(1);
      const breach = fill(1);
      assert.equal(breach.events.filter((e) => e.type === 'mmp_trigger').length, 1);
      assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
      assert.equal(h.venue.mmpConfig(1)[0]!.frozenUntil, h.ts + 5000);
    });

    test('a snapshot round-trip keeps the exact window', () => {
      const { h, quote, fill } = optionQuote(0.3);
      fill(2);
      fill(1);
      const restored = Venue.restore(JSON.parse(JSON.stringify(h.venue.snapshot())));
      assert.equal(restored.stateHash(), h.venue.stateHash());
      assert.equal(restored.mmpConfig(1)[0]!.quantity, '0.3');
      restored.execute({
        ...h.orderCommand(2, 'buy', 1, 500),
        instrumentName: option,
        seq: h.seq + 1,
        ts: h.ts,
      } as never);
      assert.equal(restored.getOrder(quote.orderId)!.cancelReason, 'mmp_trigger');
    });

    test('a snapshot written before (float quantities) restores to its hash and counts its fills exactly', () => {
      const { h, quote, fill } = optionQuote(0.3);
      fill(2);
      fill(1);
      const snapshot = JSON.parse(JSON.stringify(h.venue.snapshot()));
      // The earlier build saved each fill's quantity as a float: amountGrid.toNumber(lots).
      for (const [, group] of snapshot.advanced.mmp)
        group.window = group.window.map((f: { ts: number; delta: number; vega: number }, i: number) => ({
          ts: f.ts,
          quantity: [0.2, 0.1][i],
          delta: f.delta,
          vega: f.vega,
        }));
      const restored = Venue.restore(snapshot);
      assert.equal(restored.stateHash(), Venue.restore(snapshot).stateHash());
      assert.deepEqual(restored.snapshot(), snapshot, 'restores as it was written');
      assert.equal(restored.mmpConfig(1)[0]!.quantity, '0.3');
      restored.execute({
        ...h.orderCommand(2, 'buy', 1, 500),
        instrumentName: option,
        seq: h.seq + 1,
        ts: h.ts,
      } as never);
      assert.equal(restored.mmpConfig(1)[0]!.frozenUntil, h.ts + 5000);
      assert.equal(restored.getOrder(quote.orderId)!.cancelReason, 'mmp_trigger');
    });
  });

  test('a config for an index no listed instrument follows is refused, naming indexName', () => {
    const h = new AdvancedHarness();
    const result = h.run({
      type: 'set_mmp_config',
      accountId: 1,
      indexName: 'doge_usd',
      interval: 10,
      frozenTime: 5,
      quantityLimit: 500,
    });
    assert.equal(errorOf(result), 'invalid_params');
    assert.deepEqual(result.ok ? null : result.error.data, { field: 'indexName' });
    assert.deepEqual(h.venue.mmpConfig(1), []);
  });

  test('delta limit counts option fills with the published delta; vega likewise', () => {
    const { h, option } = markedOption();
    config(h, { quantityLimit: 1_000, deltaLimit: 1, vegaLimit: 1_000 });
    const quote = orderOf(
      h.ok({ ...h.orderCommand(1, 'sell', 100, 500, { mmp: true }), instrumentName: option }),
    );
    // 15 lots × 0.1 BTC × 0.5 = 0.75 delta: fine; another 10 lots → 1.25 > 1.
    h.ok({ ...h.orderCommand(2, 'buy', 15, 500), instrumentName: option });
    assert.equal(h.get(quote.orderId).orderState, 'open');
    h.ok({ ...h.orderCommand(2, 'buy', 10, 500), instrumentName: option });
    assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
  });

  test('a delta exactly at its limit is no breach; one lot more is', () => {
    const h = new AdvancedHarness();
    h.markPerpetual();
    config(h, { quantityLimit: 1_000_000, deltaLimit: 0.01 });
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true })));
    // 50 lots × 10 USD at an index of 50,000 USD: 0.01 BTC.
    h.ok(h.orderCommand(2, 'buy', 50, 100_000));
    const [status] = h.venue.mmpConfig(1);
    assert.deepEqual([status!.delta, status!.frozenUntil], [0.01, null]);
    assert.equal(h.get(quote.orderId).orderState, 'open');
    h.ok(h.orderCommand(2, 'buy', 1, 100_000));
    assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
  });

  test('a vega exactly at its limit is no breach; one lot more is', () => {
    const { h, option } = markedOption();
    config(h, { quantityLimit: 1_000, deltaLimit: 100, vegaLimit: 30 });
    const quote = orderOf(
      h.ok({ ...h.orderCommand(1, 'sell', 100, 500, { mmp: true }), instrumentName: option }),
    );
    // 15 lots × 0.1 BTC × 20 = 30 vega.
    h.ok({ ...h.orderCommand(2, 'buy', 15, 500), instrumentName: option });
    const [status] = h.venue.mmpConfig(1);
    assert.deepEqual([status!.vega, status!.frozenUntil], [30, null]);
    assert.equal(h.get(quote.orderId).orderState, 'open');
    h.ok({ ...h.orderCommand(2, 'buy', 1, 500), instrumentName: option });
    assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
  });

  test('a combo fill counts its legs’ delta and vega (a call spread nets its legs), not the combo as a future', () => {
    const h = new AdvancedHarness();
    const low = 'BTC-27DEC26-70000-C';
    const high = 'BTC-27DEC26-75000-C';
    const legs = new Map([
      [low, optionSpec()],
      [high, optionSpec({ name: high, strike: '75000' })],
    ]);
    for (const spec of legs.values()) h.list(spec);
    const created = createCombo(
      {
        kind: 'call_spread',
        currency: 'BTC',
        linear: false,
        expiration: Date.UTC(2026, 11, 27, 8),
        longStrike: 70_000,
        shortStrike: 75_000,
      },
      (name) => legs.get(name),
      h.ts,
    );
    assert.ok(created.ok);
    h.list(created.spec);
    const combo = created.spec.name;
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 50_000 }],
      markPrices: [
        { instrumentName: low, markPrice: 500, delta: 0.5, vega: 20 },
        { instrumentName: high, markPrice: 300, delta: 0.3, vega: 15 },
      ],
    });
    // Net per spread: 0.2 delta and 5 vega per BTC; the limits allow 4 BTC of spread by delta.
    config(h, { quantityLimit: 1_000, deltaLimit: 0.8, vegaLimit: 1_000 });
    const quote = orderOf(
      h.ok({ ...h.orderCommand(1, 'sell', 100, 200, { mmp: true }), instrumentName: combo }),
    );
    // 30 lots × 0.1 BTC × 0.2 = 0.6 delta: fine (as an inverse future it was 3 BTC / 50,000).
    h.ok({ ...h.orderCommand(2, 'buy', 30, 200), instrumentName: combo });
    assert.equal(h.get(quote.orderId).orderState, 'open');
    // 15 more lots: 0.9 > 0.8.
    h.ok({ ...h.orderCommand(2, 'buy', 15, 200), instrumentName: combo });
    assert.equal(h.get(quote.orderId).cancelReason, 'mmp_trigger');
  });

  test('mmp needs an MMP config for the index: placing and editing to mmp are refused (13040) without one', () => {
    const h = new AdvancedHarness();
    const refused = h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }));
    assert.equal(errorOf(refused), 'mmp_required');
    assert.equal(ERROR_CATALOGUE.mmp_required.code, 13040, "Deribit's number");
    assert.deepEqual(!refused.ok && refused.error.data, { field: 'mmp', indexName: 'btc_usd' });
    assert.deepEqual(h.venue.openOrders({ accountId: 1 }), [], 'nothing placed');

    const plain = orderOf(h.ok(h.orderCommand(1, 'sell', 1, 101_000)));
    const edit = { type: 'edit_order' as const, accountId: 1, orderId: plain.orderId, price: 102_000 };
    assert.equal(errorOf(h.run({ ...edit, mmp: true })), 'mmp_required');
    assert.equal(h.get(plain.orderId).price, 101_000, 'the refused edit changed nothing');
    assert.equal(h.get(plain.orderId).mmp, false);

    // Another account's or another index's config does not count.
    config(h, { accountId: 2 });
    h.list(perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH', settlementCurrency: 'ETH' }));
    config(h, { indexName: 'eth_usd' });
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_required');

    config(h);
    const mmp = orderOf(h.ok(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true })));
    assert.equal(mmp.mmp, true);
    h.ok({ ...edit, mmp: true });
    assert.equal(h.get(plain.orderId).mmp, true);
    // Removing the config: orders already flagged stay; new MMP orders and edits to mmp are refused.
    config(h, { interval: 0 });
    assert.equal(h.get(mmp.orderId).orderState, 'open');
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_required');
    assert.equal(errorOf(h.run({ ...edit, orderId: mmp.orderId, mmp: true })), 'mmp_required');
    h.ok({ ...edit, orderId: mmp.orderId, price: 103_000 });
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('an edit to mmp while the group is frozen is refused (mmp_trigger); a trigger order cannot take mmp', () => {
    const h = new AdvancedHarness();
    config(h, { quantityLimit: 5 });
    h.ok(h.orderCommand(1, 'sell', 10, 100_000, { mmp: true }));
    const plain = orderOf(h.ok(h.orderCommand(1, 'sell', 10, 101_000)));
    h.ok(h.orderCommand(2, 'buy', 6, 100_000));
    assert.equal(h.venue.mmpConfig(1)[0]!.frozenUntil, h.ts + 5000);
    const edit = { type: 'edit_order' as const, accountId: 1, orderId: plain.orderId, mmp: true };
    assert.equal(errorOf(h.run(edit)), 'mmp_trigger');
    assert.equal(h.get(plain.orderId).mmp, false);
    h.ts += 5000;
    h.ok(edit);
    assert.equal(h.get(plain.orderId).mmp, true);

    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 3, 90_000, {
          orderType: 'stop_limit',
          trigger: 'last_price',
          triggerPrice: 91_000,
        }),
      ),
    );
    assert.equal(stop.orderState, 'untriggered');
    const refused = h.run({ type: 'edit_order', accountId: 1, orderId: stop.orderId, mmp: true });
    assert.equal(errorOf(refused), 'invalid_arguments');
    assert.equal(!refused.ok && refused.error.data?.field, 'mmp');
  });

  test('config validation and MMP only for limit orders', () => {
    const h = new AdvancedHarness();
    assert.equal(
      errorOf(
        h.run({
          type: 'set_mmp_config',
          accountId: 1,
          indexName: 'btc_usd',
          interval: 3601,
          frozenTime: 0,
          quantityLimit: 1,
        }),
      ),
      'invalid_params',
    );
    assert.equal(
      errorOf(
        h.run({
          type: 'set_mmp_config',
          accountId: 1,
          indexName: 'btc_usd',
          interval: 5,
          frozenTime: 0,
          quantityLimit: 0,
        }),
      ),
      'invalid_params',
    );
    assert.equal(
      errorOf(
        h.run({
          type: 'set_mmp_config',
          accountId: 9,
          indexName: 'btc_usd',
          interval: 5,
          frozenTime: 0,
          quantityLimit: 1,
        }),
      ),
      'account_not_found',
    );
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, null, { mmp: true }))), 'invalid_arguments');
  });

  test('reset_mmp empties the window: earlier fills no longer count toward a breach', () => {
    const h = new AdvancedHarness();
    config(h);
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true })));
    h.ok(h.orderCommand(2, 'buy', 40, 100_000)); // 400 USD
    h.ok({ type: 'reset_mmp', accountId: 1, indexName: 'btc_usd' });
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '0');
    h.ok(h.orderCommand(2, 'buy', 20, 100_000)); // 200 USD: 600 without the reset
    assert.deepEqual(
      [h.venue.mmpConfig(1)[0]!.quantity, h.venue.mmpConfig(1)[0]!.frozenUntil],
      ['200', null],
    );
    assert.equal(h.get(quote.orderId).orderState, 'open');
  });

  test('a breach empties the window: after the freeze a small fill does not freeze again', () => {
    const h = new AdvancedHarness();
    config(h, { interval: 60, frozenTime: 1 });
    h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true }));
    const breach = h.ok(h.orderCommand(2, 'buy', 51, 100_000)); // 510 USD > 500
    assert.equal(breach.events.filter((e) => e.type === 'mmp_trigger').length, 1);
    h.ts += 2_000; // the 1 s freeze is over, the 60 s interval is not
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 100, 100_000, { mmp: true })));
    const small = h.ok(h.orderCommand(2, 'buy', 1, 100_000)); // 10 USD
    assert.equal(
      small.events.some((e) => e.type === 'mmp_trigger'),
      false,
    );
    assert.equal(h.get(quote.orderId).orderState, 'open');
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '10');
  });

  test('only fills of mmp orders count: a plain order of the same account trades without touching the window', () => {
    const h = new AdvancedHarness();
    config(h);
    const quote = orderOf(h.ok(h.orderCommand(1, 'sell', 10, 101_000, { mmp: true })));
    h.ok(h.orderCommand(1, 'sell', 100, 100_000)); // plain
    const trade = h.ok(h.orderCommand(2, 'buy', 60, 100_000)); // 600 USD of plain fills
    assert.equal(
      trade.events.some((e) => e.type === 'mmp_trigger'),
      false,
    );
    assert.equal(h.venue.mmpConfig(1)[0]!.quantity, '0');
    assert.equal(h.get(quote.orderId).orderState, 'open');
  });

  test('one sweep through several mmp quotes freezes once; fills after the breach are not counted', () => {
    const h = new AdvancedHarness();
    config(h);
    h.ok(h.orderCommand(1, 'sell', 60, 100_000, { mmp: true }));
    h.ok(h.orderCommand(1, 'sell', 60, 100_500, { mmp: true }));
    const sweep = h.ok(h.orderCommand(2, 'buy', 120, 100_500)); // 600 USD, then 600 USD more
    assert.equal(sweep.events.filter((e) => e.type === 'mmp_trigger').length, 1);
    const [status] = h.venue.mmpConfig(1);
    assert.deepEqual([status!.quantity, status!.frozenUntil], ['0', h.ts + 5000]);
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_trigger');
  });

  test('set_mmp_config on a group frozen until reset keeps it frozen (only reset_mmp lifts it)', () => {
    const h = new AdvancedHarness();
    config(h, { frozenTime: 0, quantityLimit: 10 });
    h.ok(h.orderCommand(1, 'sell', 5, 100_000, { mmp: true }));
    h.ok(h.orderCommand(2, 'buy', 2, 100_000)); // 20 USD > 10: frozen until reset
    config(h, { frozenTime: 0, quantityLimit: 1_000 });
    assert.equal(h.venue.mmpConfig(1)[0]!.frozenUntil, 0);
    assert.equal(h.venue.mmpConfig(1)[0]!.quantityLimit, 1_000);
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), 'mmp_trigger');
    h.ok({ type: 'reset_mmp', accountId: 1, indexName: 'btc_usd' });
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 1, 101_000, { mmp: true }))), null);
  });
});
