/**
 * The portfolio push families' routing (src/api/portfolios/channels.ts), without a gateway:
 * which topics a subscription listens on, which sub-machine events become `trade-news`, and the
 * refusal of an unauthenticated connection.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Principal } from '../auth/authenticator.ts';
import { ChannelRegistry, topicFor } from '../channels.ts';
import type { CommittedBatch, ReadPort } from '../ports.ts';
import {
  ORDER_CHANGE,
  orderChangeChannel,
  PORTFOLIO_SUB_MACHINE,
  registerPortfolioChannels,
  TRADE_NEWS,
  tradeNewsChannel,
} from './channels.ts';

function principal(accountIds: number[]): Principal {
  return {
    apiKey: 'key',
    userId: 7,
    accountIds: new Set(accountIds),
    defaultAccountId: accountIds[0]!,
    roles: new Set(),
    deskName: null,
    rateLimits: null,
  };
}

/**
 * The read side these channels use, with no instrument listed: `openOrders` answers `orders` for
 * every account and records the accounts asked in `asked`.
 */
function readsWithoutInstruments(asked: number[] = [], orders: readonly object[] = []): ReadPort {
  return {
    instrument: () => undefined,
    openOrders: (accountId: number) => {
      asked.push(accountId);
      return orders;
    },
  } as unknown as ReadPort;
}

describe('order.change.any routing', () => {
  test("the subscription listens on every account of the key's user, in account order", () => {
    const calls: number[] = [];
    const resolved = orderChangeChannel(readsWithoutInstruments(calls)).resolve(
      ORDER_CHANGE,
      principal([12, 4, 9]),
    );
    assert.ok(resolved !== null, 'order.change.any is a channel of this family');
    assert.deepEqual(
      [...resolved.topics].sort(),
      [4, 9, 12].map((id) => topicFor(ORDER_CHANGE, id)).sort(),
      "live order changes of every one of the user's accounts reach the subscriber",
    );
    resolved.snapshot!();
    assert.deepEqual(calls, [4, 9, 12], 'the snapshot lists the accounts in ascending order');
  });

  test('an unauthenticated connection is refused authorization_required', () => {
    for (const family of [
      orderChangeChannel(readsWithoutInstruments()),
      tradeNewsChannel(readsWithoutInstruments()),
    ]) {
      assert.throws(
        () => family.resolve(family.pattern, null),
        (error: unknown) => (error as { errorName?: string }).errorName === 'authorization_required',
        `${family.pattern} refuses a connection without a key as authorization_required`,
      );
    }
  });
});

describe('trade-news routing', () => {
  test('only portfolio lifecycle messages are pushed, to the account they concern', () => {
    const family = tradeNewsChannel(readsWithoutInstruments());
    const portfolio = {
      type: 'portfolio',
      messageType: 'PORTFOLIO_SUBMITTED',
      portfolioId: 31,
      accountId: 4,
      portfolioType: 'TWAP',
      status: 'WORKING',
      timestamp: 1,
    };
    const pruned = { type: 'portfolio_pruned', portfolioId: 30, accountId: 4, timestamp: 1 };
    const batch = {
      seq: 1,
      ts: 1,
      events: [],
      subEvents: new Map([[PORTFOLIO_SUB_MACHINE, [pruned, portfolio]]]),
    } as unknown as CommittedBatch;
    const pushed: { channel: string; accountId: number | null; data: unknown }[] = [];
    family.produce(
      batch,
      (channel, accountId, data) => pushed.push({ channel, accountId, data: data() }),
      () => true,
    );
    assert.deepEqual(
      pushed.map((p) => [p.channel, p.accountId, (p.data as { portfolioId: number }).portfolioId]),
      [[TRADE_NEWS, 4, 31]],
      'a pruned portfolio sends no trade-news; the lifecycle message goes to its account',
    );
  });

  test("trade-news listens on every account of the key's user, and on no other", () => {
    const resolved = tradeNewsChannel(readsWithoutInstruments()).resolve(TRADE_NEWS, principal([12, 4, 9]));
    assert.ok(resolved !== null, 'trade-news is a channel of this family');
    assert.deepEqual(
      [...resolved.topics].sort(),
      [4, 9, 12].map((id) => topicFor(TRADE_NEWS, id)).sort(),
      "the lifecycle of portfolios in every one of the user's accounts (sendToDummyAccountIds) reaches the subscriber",
    );
  });
});

test('order.change.any leaves out an order on an instrument the venue no longer lists', () => {
  const gone = { instrumentName: 'BTC-GONE', accountId: 4, owner: '31' };
  const family = orderChangeChannel(readsWithoutInstruments([], [gone]));
  const resolved = family.resolve(ORDER_CHANGE, principal([4]));
  assert.deepEqual(resolved?.snapshot?.(), { openOrders: [] }, 'the snapshot has no null entry for it');
  const pushed: unknown[] = [];
  family.produce(
    { seq: 1, ts: 1, events: [{ type: 'order', order: gone }] } as unknown as CommittedBatch,
    (_channel, _accountId, data) => pushed.push(data()),
    () => true,
  );
  assert.deepEqual(pushed, [], 'no push of null for it');
});

test("a command's order changes go out before its trade-news (PORTFOLIO_CANCELLED after the child's cancel)", () => {
  const channels = new ChannelRegistry();
  registerPortfolioChannels(channels, readsWithoutInstruments());
  // The fanout publishes a batch family by family, in registration order.
  const principalOf = principal([4]);
  assert.deepEqual(
    channels.list().map((family) => family.resolve(ORDER_CHANGE, principalOf) !== null),
    [true, false],
  );
  assert.deepEqual(
    channels.list().map((family) => family.resolve(TRADE_NEWS, principalOf) !== null),
    [false, true],
  );
});
