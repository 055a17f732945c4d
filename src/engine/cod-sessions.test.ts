/**
 * Cancel-on-disconnect sessions in the core: which open orders belong to which session (placed
 * with `codSession`, joined by `set_cancel_on_disconnect`, passed on to the orders they make,
 * left when closed or turned off), a connection's end (`cancel_all` of its session) and the
 * start-up cancel after a crash (`cancel_cod_sessions`), identical after replay and after a
 * snapshot restore.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand } from '../core/commands.ts';
import { AdvancedHarness, orderOf } from './advanced-testkit.ts';
import { Venue } from './venue.ts';

const S1 = '41.1.1';
const S2 = '41.2.1';

const sorted = (ids: readonly string[]) => [...ids].sort();

/** Account 1: orders before and after enabling, an OTO and an OCO; account 2: its own session. */
function sessions() {
  const h = new AdvancedHarness();
  // Placed before cancel-on-disconnect was on: a plain order and a stop.
  const before = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 99_000)));
  const stop = orderOf(
    h.ok(
      h.orderCommand(1, 'sell', 1, null, {
        orderType: 'stop_market',
        trigger: 'last_price',
        triggerPrice: 90_000,
      }),
    ),
  );
  h.ok({
    type: 'set_cancel_on_disconnect',
    accountId: 1,
    session: S1,
    enabled: true,
    orderIds: [before.orderId, stop.orderId, 'BTC-999999'],
  });
  const placed = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 98_000, { codSession: S1 })));
  const oto = orderOf(
    h.ok(
      h.orderCommand(1, 'buy', 2, 97_000, {
        codSession: S1,
        linkedOrderType: 'one_triggers_other',
        triggerFillCondition: 'incremental',
        otocoConfig: [{ side: 'sell', orderType: 'limit', price: 120_000 }],
      }),
    ),
  );
  const oco = orderOf(
    h.ok(
      h.orderCommand(1, 'sell', 1, 130_000, {
        codSession: S1,
        linkedOrderType: 'one_cancels_other',
        otocoConfig: [{ side: 'sell', orderType: 'limit', price: 131_000 }],
      }),
    ),
  );
  const ocoMember = h.venue.openOrders({ accountId: 1 }).find((o) => o.ocoRef === oco.ocoRef && o !== oco);
  // Over HTTP, or a connection without cancel-on-disconnect.
  const plain = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 96_000)));
  const otherAccount = orderOf(h.ok(h.orderCommand(2, 'buy', 1, 95_000, { codSession: S2 })));
  return { h, before, stop, placed, oto, oco, ocoMember: ocoMember!, plain, otherAccount };
}

describe('cancel-on-disconnect sessions in the core', () => {
  test('orders join at placement or when it is turned on, pass it on to what they make, leave when closed', () => {
    const { h, before, stop, placed, oto, oco, plain, otherAccount } = sessions();
    const ocoIds = h.venue
      .openOrders({ accountId: 1 })
      .filter((o) => o.ocoRef !== null && o.ocoRef === oco.ocoRef)
      .map((o) => o.orderId);
    assert.equal(ocoIds.length, 2);
    const template = oto.otoOrderIds![0]!;
    assert.deepEqual(
      sorted(h.venue.codSessionOrders().get(S1)!),
      sorted([before.orderId, stop.orderId, placed.orderId, oto.orderId, template, ...ocoIds]),
    );
    assert.deepEqual(h.venue.codSessionOrders().get(S2), [otherAccount.orderId]);
    assert.ok(![...h.venue.codSessionOrders().values()].flat().includes(plain.orderId));

    // The two best bids fill, then half the OTO primary: the released increment is a new order
    // of the session; the orders that filled in full leave it.
    h.ok(h.orderCommand(3, 'sell', 2, 98_000));
    h.ok(h.orderCommand(3, 'sell', 1, 97_000));
    assert.equal(h.get(before.orderId).orderState, 'filled');
    assert.equal(h.get(placed.orderId).orderState, 'filled');
    const increment = h.get(oto.orderId).otoOrderIds!.find((id) => id !== template)!;
    assert.equal(h.get(increment).orderState, 'open');
    const s1 = h.venue.codSessionOrders().get(S1)!;
    assert.ok(s1.includes(increment), 'the released increment belongs to the session');
    assert.ok(!s1.includes(placed.orderId) && !s1.includes(before.orderId), 'a filled order belongs to none');

    // Turned off: the session's orders leave it and stay open; another account's stay in theirs.
    h.ok({ type: 'set_cancel_on_disconnect', accountId: 1, session: S1, enabled: false });
    assert.deepEqual([...h.venue.codSessionOrders().keys()], [S2]);
    assert.equal(h.get(increment).orderState, 'open');
    h.venue.validate();
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('a connection’s end cancels its session’s orders only', () => {
    const { h, before, stop, oto, plain, otherAccount } = sessions();
    const result = h.ok({
      type: 'cancel_all',
      accountId: 1,
      codSession: S1,
      cancelReason: 'cancel_on_disconnect',
    });
    assert.ok(result.orders!.some((o) => o.orderId === oto.otoOrderIds![0]));
    for (const id of [before.orderId, stop.orderId, oto.orderId]) {
      assert.equal(h.get(id).orderState, 'cancelled', id);
      assert.equal(h.get(id).cancelReason, 'cancel_on_disconnect', id);
    }
    for (const id of [plain.orderId, otherAccount.orderId]) assert.equal(h.get(id).orderState, 'open', id);
    // The session's id on another account reaches nothing.
    assert.equal(h.ok({ type: 'cancel_all', accountId: 2, codSession: S1 }).orders!.length, 0);
    assert.deepEqual([...h.venue.codSessionOrders().keys()], [S2]);
    h.venue.validate();
  });

  test('the start-up cancel takes every session’s orders; replay and snapshot restore agree', () => {
    const { h, plain } = sessions();
    const tagged = [...h.venue.codSessionOrders().values()].flat();
    const snapshot = structuredClone(h.venue.snapshot());
    const restored = Venue.restore(snapshot);
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.deepEqual(restored.codSessionOrders(), h.venue.codSessionOrders());
    assert.deepEqual(
      Venue.restore(restored.snapshot()).snapshot(),
      snapshot,
      'restore(snapshot) round-trips',
    );

    h.ts += 1000;
    const command = { type: 'cancel_cod_sessions', seq: h.seq + 1, ts: h.ts } as const satisfies CoreCommand;
    const result = h.ok({ type: 'cancel_cod_sessions' });
    assert.deepEqual(sorted(result.orders!.map((o) => o.orderId)), sorted(tagged));
    for (const id of tagged) {
      assert.equal(h.get(id).orderState, 'cancelled', id);
      assert.equal(h.get(id).cancelReason, 'cancel_on_disconnect', id);
    }
    assert.equal(h.get(plain.orderId).orderState, 'open');
    assert.equal(h.venue.codSessionOrders().size, 0);
    h.venue.validate();

    const fromSnapshot = restored.execute(command);
    assert.deepEqual(fromSnapshot, result);
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('saved state is unchanged when no session is on, or once its orders are gone', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(1, 'buy', 1, 99_000));
    assert.doesNotMatch(JSON.stringify(h.venue.snapshot()), /codSession/);
    h.ok(h.orderCommand(1, 'buy', 1, 98_000, { codSession: S1 }));
    assert.match(JSON.stringify(h.venue.snapshot()), /codSession/);
    h.ok({ type: 'cancel_all', accountId: 1, codSession: S1, cancelReason: 'cancel_on_disconnect' });
    assert.doesNotMatch(JSON.stringify(h.venue.snapshot()), /codSession/);
    // Nothing to cancel: nothing changes.
    const hash = h.venue.stateHash();
    assert.deepEqual(h.ok({ type: 'cancel_cod_sessions' }).orders, []);
    assert.equal(h.venue.stateHash(), hash);
  });

  test('an unknown account is refused naming accountId', () => {
    const h = new AdvancedHarness();
    const result = h.run({ type: 'set_cancel_on_disconnect', accountId: 99, session: S1, enabled: true });
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.data.field, 'accountId');
  });
});

describe('the account scope (set_account_cancel_on_disconnect)', () => {
  test('a flag on the account: on and off, per account; it touches no session and no order', () => {
    const h = new AdvancedHarness();
    const order = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 99_000, { codSession: S1 })));
    const plain = orderOf(h.ok(h.orderCommand(1, 'buy', 1, 98_000)));
    const sessions = h.venue.codSessionOrders();
    assert.equal(h.venue.accountCancelOnDisconnect(1), false);
    h.ok({ type: 'set_account_cancel_on_disconnect', accountId: 1, enabled: true });
    assert.equal(h.venue.accountCancelOnDisconnect(1), true);
    assert.equal(h.venue.accountCancelOnDisconnect(2), false);
    assert.equal(h.venue.accountCancelOnDisconnect(99), false, 'unknown account');
    assert.deepEqual(h.venue.codSessionOrders(), sessions);
    assert.equal(h.get(order.orderId).orderState, 'open');
    assert.equal(h.get(plain.orderId).orderState, 'open');
    h.ok({ type: 'set_account_cancel_on_disconnect', accountId: 1, enabled: false });
    assert.equal(h.venue.accountCancelOnDisconnect(1), false);
    assert.deepEqual(h.venue.codSessionOrders(), sessions);
    assert.equal(h.replayHash(), h.venue.stateHash());
  });

  test('saved only while on: restore and replay agree, and off leaves the snapshot as if never set', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(1, 'buy', 1, 99_000));
    const never = structuredClone(h.venue.snapshot());
    assert.doesNotMatch(JSON.stringify(never), /cancelOnDisconnect/);

    h.ok({ type: 'set_account_cancel_on_disconnect', accountId: 2, enabled: true });
    const on = structuredClone(h.venue.snapshot());
    assert.deepEqual(
      on.accounts.filter((a) => a.cancelOnDisconnect === true).map((a) => a.id),
      [2],
      'saved on account 2 only',
    );
    const restored = Venue.restore(on);
    assert.equal(restored.accountCancelOnDisconnect(2), true);
    assert.equal(restored.accountCancelOnDisconnect(1), false);
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.deepEqual(Venue.restore(restored.snapshot()).snapshot(), on, 'restore(snapshot) round-trips');
    assert.equal(h.replayHash(), h.venue.stateHash());

    h.ok({ type: 'set_account_cancel_on_disconnect', accountId: 2, enabled: false });
    const off = h.venue.snapshot();
    assert.doesNotMatch(JSON.stringify(off), /cancelOnDisconnect/);
    // Only the clock and sequence moved: the saved accounts are those of a venue that never set it.
    assert.deepEqual(off.accounts, never.accounts);
    assert.equal(Venue.restore(structuredClone(off)).stateHash(), h.venue.stateHash());
  });

  test('an unknown account is refused naming accountId', () => {
    const h = new AdvancedHarness();
    const result = h.run({ type: 'set_account_cancel_on_disconnect', accountId: 99, enabled: true });
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.data.field, 'accountId');
  });
});
