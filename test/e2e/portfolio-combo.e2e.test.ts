/**
 * A COMMON portfolio whose legs form a combo, end to end through the flat portfolio routes and
 * the sdk: the submit lists the call spread (a journaled list_instrument) and the portfolio
 * places one order on it at the legs' net price; a maker sells the spread on its book with
 * `private/sell`; the portfolio completes, each leg filled at its leg trade's price, and the
 * positions land on both legs (none on the combo).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PORTFOLIO_BASE_PATH } from '../../src/api/portfolios/routes.ts';
import { optionSpec } from '../../src/engine/testkit.ts';
import {
  type PortfolioCore,
  type PortfolioHarness,
  startCore,
  startPortfolioHarness,
} from '../support/portfolio-harness.ts';

const TRADER = 0;
const MAKER = 1;
const LONG = 'BTC-27DEC26-70000-C';
const SHORT = 'BTC-27DEC26-75000-C';
const SPREAD = 'BTC-CS-27DEC26-70000_75000';

interface Info {
  portfolioStatus: string;
  endReason: string | null;
  legs: { filledQuantity: string; averagePrice: string | null; childOrderIds: string[] }[];
  childOrders: {
    orderId: string;
    instrument: string;
    legIds: number[];
    quantity: string;
    price: string | null;
  }[];
}

describe('COMMON call spread as one combo order through the API', () => {
  let harness: PortfolioHarness;
  let core: PortfolioCore;

  before(async () => {
    core = await startCore([optionSpec({ name: LONG }), optionSpec({ name: SHORT, strike: '75000' })]);
    const marks = await core.ports.submit({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: LONG, markPrice: 520 },
        { instrumentName: SHORT, markPrice: 310 },
      ],
    });
    assert.ok(marks.ok);
    harness = await startPortfolioHarness(core);
  });
  after(() => harness.close());

  test('submitted, crossed on the combo book by a maker, FILLED with positions on both legs', async () => {
    const http = harness.http(TRADER);
    const accountId = harness.credentials[TRADER]!.accountIds[0]!;
    assert.equal(core.ports.reads.instrument(SPREAD), undefined, 'the spread is not listed yet');
    const leg = (instrument: string, side: 1 | 2, price: number) => ({
      instrument,
      instrumentType: 'OPTION',
      side,
      quantity: '1',
      priceOptions: { priceType: 'LIMIT', price, priceIn: 'BTC' },
    });
    const { portfolioId } = await http.flat<{ portfolioId: number }>(
      'POST',
      `${PORTFOLIO_BASE_PATH}/submit`,
      {
        accountId,
        portfolioType: 'COMMON',
        strategy: 'Call spread',
        legs: [leg(LONG, 1, 0.05), leg(SHORT, 2, 0.03)],
      },
    );
    assert.ok(core.ports.reads.instrument(SPREAD), 'listed by the submit');

    const info = () => http.flat<Info>('GET', `${PORTFOLIO_BASE_PATH}/info?portfolioId=${portfolioId}`);
    const working = await info();
    assert.equal(working.portfolioStatus, 'WORKING');
    assert.equal(working.childOrders.length, 1);
    const child = working.childOrders[0]!;
    assert.deepEqual(
      { instrument: child.instrument, legIds: child.legIds, quantity: child.quantity, price: child.price },
      { instrument: SPREAD, legIds: [0, 1], quantity: '1', price: '0.02' },
    );
    assert.deepEqual(
      working.legs.map((l) => l.childOrderIds),
      [[child.orderId], [child.orderId]],
    );
    const order = await http.call('private/get_order_state', { orderId: child.orderId });
    assert.equal(order.instrumentName, SPREAD);
    assert.equal(order.side, 'buy');

    const sold = await harness.http(MAKER).call('private/sell', {
      instrumentName: SPREAD,
      quantity: '1',
      price: '0.02',
    });
    assert.equal(sold.order.orderState, 'filled');

    // The portfolio absorbed the trade within the maker's command.
    const done = await info();
    assert.equal(done.portfolioStatus, 'COMPLETED');
    assert.equal(done.endReason, 'filled');
    // 0.02 split at the legs' marks (0.052, 0.031), the dearer leg absorbing the difference.
    assert.deepEqual(
      done.legs.map((l) => [l.filledQuantity, l.averagePrice]),
      [
        ['1', '0.051'],
        ['1', '0.031'],
      ],
    );

    const positions = Object.fromEntries(
      (await http.call('private/get_positions', { currency: 'BTC' }))
        .filter((p) => p.size !== '0')
        .map((p) => [p.instrumentName, p.size]),
    );
    assert.deepEqual(positions, { [LONG]: '1', [SHORT]: '-1' });
  });
});
