/**
 * Deposit ids: a deposit that carries a `depositId` credits once; a retry with the same id and
 * content changes nothing, a different content under the same id is refused naming depositId.
 * The ids are engine state: snapshotted, restored, hashed, bounded per account.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEPOSIT_IDS_PER_ACCOUNT } from './accounts.ts';
import { Harness } from './testkit.ts';
import { Venue } from './venue.ts';

const balance = (h: Harness, accountId: number, currency = 'BTC') =>
  h.venue.accountSummary(accountId, currency)!.balance;

describe('deposit ids', () => {
  test('the same id and content credits once; a different content under it is refused naming depositId', () => {
    const h = new Harness();
    h.ok({ type: 'create_account', accountId: 1 });
    h.ok({ type: 'create_account', accountId: 2 });
    const first = h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 500, depositId: 'd-1' });
    assert.equal(first.events.length, 1);
    const again = h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 500, depositId: 'd-1' });
    assert.deepEqual(again.events, [], 'a retry changes nothing');
    assert.equal(balance(h, 1), 500);
    for (const other of [
      { accountId: 1, currency: 'BTC', amount: 501 },
      { accountId: 1, currency: 'ETH', amount: 500 },
      { accountId: 2, currency: 'BTC', amount: 500 },
    ]) {
      const refused = h.run({ type: 'deposit', ...other, depositId: 'd-1' });
      assert.equal(refused.ok, false);
      if (refused.ok) continue;
      assert.equal(refused.error.name, 'invalid_params');
      assert.equal(refused.error.data.field, 'depositId');
      assert.match(refused.error.message, /depositId 'd-1' was already used for a different deposit/);
    }
    assert.equal(balance(h, 1), 500);
    assert.equal(balance(h, 2), 0);
    // Deposits without an id behave as before: each one credits.
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 5 });
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 5 });
    assert.equal(balance(h, 1), 510);
    // A refused deposit does not take its id.
    assert.equal(
      h.run({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 0, depositId: 'd-2' }).ok,
      false,
    );
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 7, depositId: 'd-2' });
    assert.equal(balance(h, 1), 517);
  });

  test('a malformed id is refused naming depositId', () => {
    const h = new Harness();
    h.ok({ type: 'create_account', accountId: 1 });
    for (const depositId of ['', 'a b', 'x'.repeat(65), 'é', 7 as unknown as string]) {
      const refused = h.run({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 1, depositId });
      assert.equal(refused.ok, false, JSON.stringify(depositId));
      if (!refused.ok) assert.equal(refused.error.data.field, 'depositId');
    }
    h.ok({
      type: 'deposit',
      accountId: 1,
      currency: 'BTC',
      amount: 1,
      depositId: `A-z_0.9:${'x'.repeat(56)}`,
    });
  });

  test('the ids survive a snapshot and its restore, are hashed, and old snapshots load unchanged', () => {
    const h = new Harness();
    h.ok({ type: 'create_account', accountId: 1 });
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 100 });
    const withoutIds = JSON.parse(JSON.stringify(h.venue.snapshot()));
    assert.equal('depositIds' in withoutIds.accounts[0], false, 'no ids: the snapshot is as before');
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 500, depositId: 'd-1' });
    const snapshot = JSON.parse(JSON.stringify(h.venue.snapshot()));
    assert.deepEqual(snapshot.accounts[0].depositIds, [['d-1', 'BTC', 500]]);
    const restored = new Harness({}, Venue.restore(snapshot));
    restored.seq = h.seq;
    restored.ts = h.ts;
    assert.equal(restored.venue.stateHash(), h.venue.stateHash());
    assert.deepEqual(restored.venue.snapshot(), h.venue.snapshot());
    assert.deepEqual(
      restored.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 500, depositId: 'd-1' }).events,
      [],
    );
    assert.equal(balance(restored, 1), 600);
    // The ids are state: two venues that differ only by them hash differently.
    const other = new Harness();
    other.ok({ type: 'create_account', accountId: 1 });
    other.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 100 });
    other.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 500 });
    assert.notEqual(other.venue.stateHash(), h.venue.stateHash());
    // A snapshot written before ids existed restores and hashes as it was written.
    const old = Venue.restore(withoutIds);
    assert.deepEqual(JSON.parse(JSON.stringify(old.snapshot())), withoutIds);
  });

  test(`each account remembers its newest ${DEPOSIT_IDS_PER_ACCOUNT} ids`, () => {
    const h = new Harness();
    h.ok({ type: 'create_account', accountId: 1 });
    for (let i = 0; i <= DEPOSIT_IDS_PER_ACCOUNT; i++) {
      h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 1, depositId: `d-${i}` });
    }
    const saved = h.venue.snapshot().accounts[0]!.depositIds!;
    assert.equal(saved.length, DEPOSIT_IDS_PER_ACCOUNT);
    assert.equal(saved[0]![0], 'd-1', 'the oldest id was dropped');
    // The newest is still known; the dropped one credits again (the documented bound).
    assert.deepEqual(
      h.ok({
        type: 'deposit',
        accountId: 1,
        currency: 'BTC',
        amount: 1,
        depositId: `d-${DEPOSIT_IDS_PER_ACCOUNT}`,
      }).events,
      [],
    );
    assert.equal(
      h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 1, depositId: 'd-0' }).events.length,
      1,
    );
    assert.equal(balance(h, 1), DEPOSIT_IDS_PER_ACCOUNT + 2);
  });
});
