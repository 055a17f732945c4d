import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreEvent } from '../core/events.ts';
import { Instrument } from '../domain/instrument.ts';
import { DEFAULT_PRODUCTS, inverseFutureSpec } from '../market/products.ts';
import { accountChannel } from './account-channel.ts';
import type { Principal } from './auth/authenticator.ts';
import { ChannelRegistry, Fanout, type Subscriber } from './channels.ts';
import type { AccountSummaryView, ReadPort } from './ports.ts';

const PERP = new Instrument(1, inverseFutureSpec(DEFAULT_PRODUCTS.BTC!, null, 'perpetual', 0));

/** Accounts 1 and 2 whose BTC equity the test moves by hand; reads are counted. */
function venue() {
  const equity = new Map<number, number>([
    [1, 1_000],
    [2, 2_000],
  ]);
  let reads = 0;
  const summary = (accountId: number, currency: string): AccountSummaryView | undefined => {
    reads++;
    const value = currency === 'BTC' ? (equity.get(accountId) ?? 0) : 0;
    return {
      accountId,
      currency,
      selfTradeMode: 'cancel_maker',
      balance: 1_000,
      equity: value,
      marginBalance: value,
      availableFunds: value,
      initialMargin: 0,
      maintenanceMargin: 0,
      futuresPl: 0,
      optionsPl: 0,
      optionsValue: 0,
    };
  };
  const port = {
    currencies: () => ['BTC', 'USDC'],
    instrument: (name: string) => (name === PERP.name ? PERP : undefined),
    accountSummary: summary,
  } as unknown as ReadPort;
  const channels = new ChannelRegistry();
  channels.register(accountChannel(port));
  const fanout = new Fanout(channels);
  let seq = 0;
  let now = 0;
  const publish = (events: CoreEvent[], after = 10) => {
    now += after;
    fanout.publish({ seq: ++seq, ts: now, events });
  };
  const subscribe = (subscriber: Subscriber, name: string, accountId: number) =>
    fanout.subscribe(
      subscriber,
      name,
      channels.resolve(name, { defaultAccountId: accountId } as Principal)!.resolved,
    );
  return { equity, publish, subscribe, channels, fanout, readCount: () => reads };
}

function recorder() {
  const pushes: Array<[string, number, string, boolean]> = [];
  const subscriber: Subscriber = {
    push: (channel, seq, data, snapshot) =>
      pushes.push([channel, seq, (data as { equity: string }).equity, snapshot]),
  };
  return { subscriber, pushes };
}

const balance = (accountId: number, currency: string): CoreEvent => ({
  type: 'balance',
  accountId,
  currency,
  balance: 1,
  change: 1,
  reason: 'trade',
});

test('user.portfolio: a snapshot, then the summary each time a command touching it changes what it shows', () => {
  const v = venue();
  const one = recorder();
  const two = recorder();
  assert.equal(v.subscribe(one.subscriber, 'user.portfolio.btc', 1), true);
  assert.equal(v.subscribe(one.subscriber, 'user.portfolio.BTC', 1), false);
  v.subscribe(two.subscriber, 'user.portfolio.BTC.raw', 2);
  v.equity.set(1, 1_100);
  v.publish([balance(1, 'BTC')]); // account 1's BTC: pushed to it only
  v.publish([balance(1, 'BTC')]); // unchanged: nothing
  v.equity.set(2, 2_500);
  v.publish([balance(2, 'USDC')]); // another currency: not re-read
  v.publish([{ type: 'order', order: { accountId: 2, instrumentName: PERP.name } } as CoreEvent]);
  assert.deepEqual(one.pushes, [
    ['user.portfolio.btc', 1, '0.00001', true],
    ['user.portfolio.btc', 2, '0.000011', false],
  ]);
  assert.deepEqual(two.pushes, [
    ['user.portfolio.BTC.raw', 1, '0.00002', true],
    ['user.portfolio.BTC.raw', 2, '0.000025', false],
  ]);
});

test('user.portfolio follows the marks once a second of batch time', () => {
  const v = venue();
  const one = recorder();
  v.subscribe(one.subscriber, 'user.portfolio.BTC', 1);
  v.publish([], 100); // the first batch compares every summary: unchanged, nothing pushed
  v.equity.set(1, 1_200); // the marks moved
  const reads = v.readCount();
  v.publish([balance(2, 'BTC')], 100); // another account's command: account 1 is not re-read
  v.publish([], 400); // a price tick within the second: not re-read either
  assert.equal(v.readCount(), reads);
  assert.equal(one.pushes.length, 1);
  v.publish([], 500); // a second on
  assert.deepEqual(one.pushes.at(-1), ['user.portfolio.BTC', 2, '0.000012', false]);
  v.equity.set(1, 1_300);
  v.publish([balance(2, 'BTC')], 999);
  assert.equal(one.pushes.length, 2);
  v.publish([balance(2, 'BTC')], 1); // a second since the last full check
  assert.deepEqual(one.pushes.at(-1), ['user.portfolio.BTC', 3, '0.000013', false]);
});

test('user.portfolio: a summary nobody holds is no longer read; a currency not listed is no channel; needs a key', () => {
  const v = venue();
  const one = recorder();
  const two = recorder();
  v.subscribe(one.subscriber, 'user.portfolio.BTC', 1);
  v.subscribe(two.subscriber, 'user.portfolio.BTC', 2); // the fan-out runs while anyone holds anything
  v.fanout.unsubscribeAll(one.subscriber);
  const reads = v.readCount();
  // Unchanged or changed, a summary nobody holds is not read again (account 2's is, once a second).
  v.publish([], 1_000);
  v.equity.set(1, 1_200);
  v.publish([], 1_000);
  v.publish([balance(1, 'BTC')]);
  assert.equal(v.readCount(), reads + 2);
  assert.equal(one.pushes.length, 1);
  assert.equal(v.channels.resolve('user.portfolio.XYZ', { defaultAccountId: 1 } as Principal), null);
  assert.throws(() => v.channels.resolve('user.portfolio.BTC', null), /needs an authenticated connection/);
});
