import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PortfolioInfoWire } from '../api/portfolios/wire.ts';
import { renderProgress } from './portfolio.ts';

test('the progress block shows status, part, per-leg bars, average, arrival and slippage', () => {
  const info = {
    portfolioId: 7,
    portfolioType: 'BALANCE',
    portfolioStatus: 'WORKING',
    currentPart: 1,
    balanceTrade: { parts: 3 },
    endReason: null,
    endMessage: null,
    legs: [
      {
        side: 1,
        instrument: 'BTC-PERPETUAL',
        quantity: '100',
        filledQuantity: '50',
        hedge: false,
        priority: true,
        averagePrice: '60010',
        arrivalPrice: '60000',
        slippageBps: 1.67,
      },
      {
        side: 2,
        instrument: 'BTC-27DEC26-70000-C',
        quantity: '2',
        filledQuantity: '0',
        hedge: false,
        priority: false,
        averagePrice: null,
        arrivalPrice: null,
        slippageBps: null,
      },
    ],
  } as unknown as PortfolioInfoWire;
  const lines = renderProgress(info);
  assert.equal(lines[0], 'portfolio 7 BALANCE WORKING part 2/3');
  assert.match(
    lines[1]!,
    /BUY {2}BTC-PERPETUAL +\[#{12}\.{12}\] 50\/100 priority avg 60010 arrival 60000 slippage 1\.67 bps/,
  );
  assert.match(lines[2]!, /SELL BTC-27DEC26-70000-C +\[\.{24}\] 0\/2$/);
});
