/**
 * `private/set_self_trading_config` through the gateway (HTTP, the dispatcher's schema and role
 * checks) over the real engine and sequencer: the mode changes what an order meeting the
 * account's own resting order does, and is answered once journaled.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Role } from '../../src/api/auth/key-store.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const TAKER = 0;
const MAKER1 = 1;
const MULTI = 3;
const SET = 'private/set_self_trading_config';

function refusedWith(name: string, field?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.errorName, name, error.message);
    if (field !== undefined) assert.equal(error.data?.field, field, error.message);
    return true;
  };
}

describe('private/set_self_trading_config', () => {
  let harness: Harness;
  let engine: EngineVenue;
  /** While set, journal appends wait for it (the answer must wait for durability). */
  let journalHeld: Promise<void> | null = null;
  let appends = 0;
  before(async () => {
    engine = await startEngineVenue(undefined, {}, async () => {
      appends++;
      if (journalHeld !== null) await journalHeld;
    });
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  const modeOf = (accountId: number) => engine.venue.account(accountId)!.selfTradeMode;
  const accountOf = (index: number) => harness.credentials[index]!.accountIds[0]!;
  const client = (userIndex: number, roles: Role[], defaultAccountId?: number) => {
    const key = harness.keyStore.createApiKey(
      {
        userId: harness.credentials[userIndex]!.userId,
        roles,
        ...(defaultAccountId === undefined ? {} : { defaultAccountId }),
      },
      0,
    );
    return new HttpClient({
      baseUrl: harness.baseUrl,
      credentials: { apiKey: key.record.apiKey, apiSecret: key.apiSecret },
      now: () => engine.now(),
    });
  };
  const order = (http: HttpClient, side: 'buy' | 'sell') =>
    http.call(`private/${side}`, { instrumentName: PERP, quantity: '100', price: '60000' });

  test('reject_taker refuses an order crossing its own account with order_overlap; cancel_maker restores', async () => {
    const http = harness.http(TAKER);
    assert.equal(modeOf(accountOf(TAKER)), 'cancel_maker', 'the default');

    assert.equal(await http.call(SET, { mode: 'reject_taker' }), 'ok');
    assert.equal(modeOf(accountOf(TAKER)), 'reject_taker');
    const resting = await order(http, 'sell');
    await assert.rejects(order(http, 'buy'), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.code, 10003);
      assert.equal(error.errorName, 'order_overlap');
      return true;
    });
    const kept = await http.call('private/get_order_state', { orderId: resting.order.orderId });
    assert.equal(kept.orderState, 'open', 'the resting order is kept');

    assert.equal(await http.call(SET, { mode: 'cancel_maker', extendedToSubaccounts: false }), 'ok');
    assert.equal(modeOf(accountOf(TAKER)), 'cancel_maker');
    const taking = await order(http, 'buy');
    assert.equal(taking.trades.length, 0);
    assert.equal(taking.order.orderState, 'open', 'the incoming order rests');
    const cancelled = await http.call('private/get_order_state', { orderId: resting.order.orderId });
    assert.equal(cancelled.orderState, 'cancelled');
    assert.equal(cancelled.cancelReason, 'self_trade_prevention');
    await http.call('private/cancel_all', {});
  });

  test('a key without the trade role is refused (forbidden) and changes nothing', async () => {
    const takerOnly = client(TAKER, ['taker']);
    await assert.rejects(takerOnly.call(SET, { mode: 'reject_taker' }), refusedWith('forbidden'));
    assert.equal(modeOf(accountOf(TAKER)), 'cancel_maker');
  });

  test("another user's accountId is refused (account_not_owned) and changes nothing", async () => {
    const other = accountOf(MAKER1);
    await assert.rejects(
      harness.http(TAKER).call(SET, { mode: 'reject_taker', accountId: other }),
      refusedWith('account_not_owned', 'accountId'),
    );
    assert.equal(modeOf(other), 'cancel_maker');
  });

  test('accountId sets one owned account; accounts of one user still trade with each other', async () => {
    const [first, second] = harness.credentials[MULTI]!.accountIds as [number, number];
    const firstKey = harness.http(MULTI);
    assert.equal(await firstKey.call(SET, { mode: 'reject_taker', accountId: second }), 'ok');
    assert.equal(modeOf(second), 'reject_taker');
    assert.equal(modeOf(first), 'cancel_maker', 'only the account named');
    assert.equal(await firstKey.call(SET, { mode: 'reject_taker' }), 'ok');
    assert.equal(modeOf(first), 'reject_taker', 'no accountId: the default account');

    // Self-trade prevention is per account: the user's two accounts trade with each other.
    const secondKey = client(MULTI, ['trade'], second);
    await order(secondKey, 'sell');
    const taken = await order(firstKey, 'buy');
    assert.equal(taken.order.orderState, 'filled');
    assert.equal(taken.trades.length, 1);
  });

  test('extendedToSubaccounts true is refused naming the field, and changes nothing', async () => {
    const http = harness.http(MAKER1);
    await assert.rejects(
      http.call(SET, { mode: 'reject_taker', extendedToSubaccounts: true }),
      refusedWith('invalid_params', 'extendedToSubaccounts'),
    );
    assert.equal(modeOf(accountOf(MAKER1)), 'cancel_maker');
  });

  test('the schema refuses a missing or unknown mode and unknown fields, naming them', async () => {
    const http = harness.http(MAKER1);
    for (const [params, errorName, field] of [
      [{}, 'missing_params', 'mode'],
      [{ mode: 'cancel_taker' }, 'invalid_params', 'mode'],
      [{ mode: 'cancel_maker', extended_to_subaccounts: false }, 'invalid_params', 'extended_to_subaccounts'],
      [{ mode: 'cancel_maker', accountId: '1' }, 'invalid_params', 'accountId'],
      [{ mode: 'cancel_maker', accountId: 0 }, 'invalid_params', 'accountId'],
    ] as const) {
      await assert.rejects(http.call(SET, params as never), refusedWith(errorName, field));
    }
  });

  test('answered once the setting is journaled', async () => {
    let release!: () => void;
    journalHeld = new Promise((resolve) => {
      release = resolve;
    });
    const before = appends;
    let answered = false;
    const call = harness
      .http(MAKER1)
      .call(SET, { mode: 'reject_taker' })
      .then((result) => {
        answered = true;
        return result;
      });
    try {
      await until(() => appends > before);
      // Applied in the core, not answered while the journal holds it.
      assert.equal(modeOf(accountOf(MAKER1)), 'reject_taker');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(answered, false);
    } finally {
      journalHeld = null;
      release();
    }
    assert.equal(await call, 'ok');
  });
});
