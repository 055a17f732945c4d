import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import type { PortfolioInfoWire } from '../api/portfolios/wire.ts';
import { followNews, renderProgress } from './portfolio.ts';

test('ORDER_PLACED news is not printed; other events are', async () => {
  let listener: ((push: SubscriptionPush) => void) | undefined;
  const ws = {
    subscribe: async (channels: string[], on?: (push: SubscriptionPush) => void) => {
      listener = on;
      return channels;
    },
  };
  const lines: string[] = [];
  (await followNews(ws, (line) => lines.push(line)))(7);
  listener!({
    channel: 'trade-news',
    seq: 1,
    data: { type: 'ORDER_PLACED', portfolioId: 7 },
  } as SubscriptionPush);
  listener!({
    channel: 'trade-news',
    seq: 2,
    data: { type: 'PORTFOLIO_CANCELLED', portfolioId: 7 },
  } as SubscriptionPush);
  assert.deepEqual(lines, ['  PORTFOLIO_CANCELLED']);
});

test('the progress bar rounds to the nearest cell', () => {
  const info = {
    portfolioId: 1,
    portfolioType: 'BASKET',
    portfolioStatus: 'WORKING',
    currentPart: null,
    balanceTrade: null,
    endReason: null,
    endMessage: null,
    legs: [
      {
        side: 1,
        instrument: 'X',
        quantity: '100',
        filledQuantity: '65',
        hedge: false,
        priority: false,
        averagePrice: null,
        arrivalPrice: null,
        slippageBps: null,
      },
    ],
  } as unknown as PortfolioInfoWire;
  assert.match(renderProgress(info)[1]!, /\[#{16}\.{8}\]/);
});
