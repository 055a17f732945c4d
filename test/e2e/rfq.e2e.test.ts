/**
 * Block RFQ end to end: the real engine and RFQ desk inside the core machine, the real
 * sequencer on a virtual clock, the real gateway, driven through the sdk over HTTP and WS by a
 * taker and two makers (MAKER1, MAKER2 of the demo bootstrap).
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { tradeToWire } from '../../src/api/wire/orders.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import type { Harness } from '../support/gateway-harness.ts';
import { type RfqCore, startRfqApi } from '../support/rfq-api.ts';
import { until } from '../support/until.ts';

const TAKER = 0;
const MAKER1 = 1;
const MAKER2 = 2;

async function refusedWith(promise: Promise<unknown>, name: keyof typeof ERROR_CATALOGUE): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, ERROR_CATALOGUE[name].code, `${error.message}`);
    return true;
  });
}

interface Rfq {
  blockRfqId: string;
  role: string;
  status: string;
  makers: string[];
  comboId: string | null;
  quantity: string;
  legs: { instrumentName: string; ratio: string; side: string }[];
  asks?: { price: string; makers: string[] }[];
  tradeTriggers?: { side: string; price: string; quantity: string; createdAt: number }[];
}

describe('Block RFQ through the API', () => {
  let harness: Harness;
  let core: RfqCore;
  let call70: string;
  let call75: string;

  before(async () => {
    ({ core, harness, call70, call75 } = await startRfqApi());
  });
  after(() => harness.close());

  /** A maker's 25-lot ask on the call spread: the 70 call at `price70`, the 75 call at 0.03. */
  const spreadAsk = (price70: string) => ({
    executionInstruction: 'any_part_of' as const,
    side: 'sell' as const,
    quantity: '25',
    legs: [
      { instrumentName: call70, price: price70, ratio: '1', side: 'buy' as const },
      { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' as const },
    ],
  });

  /** The taker's 25-lot call spread, asked of MAKER1 only and open: its id for each side. */
  async function openSpreadRfqToMaker1(): Promise<{ rfq: Rfq; id1: string }> {
    const rfq = (await harness.http(TAKER).call('block/rfqs/create_rfq', {
      legs: [
        { instrumentName: call70, quantity: '25', side: 'buy' },
        { instrumentName: call75, quantity: '25', side: 'sell' },
      ],
      makers: ['MAKER1'],
    })) as Rfq;
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const open = (await harness.http(MAKER1).call('block/rfqs/get_rfqs', { status: 'open' })) as {
      results: Rfq[];
    };
    return { rfq, id1: open.results[0]!.blockRfqId };
  }

  test('full flow: roles, maker-side ids, competing quotes, cancel race, accept, pushes, get_trades', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const maker2 = harness.http(MAKER2);
    const makerWs = harness.ws(MAKER1);
    await makerWs.connect();
    await makerWs.auth();
    const makerPushes: SubscriptionPush[] = [];
    await makerWs.subscribe(['block_rfq.maker.BTC'], (push) => makerPushes.push(push));
    const takerWs = harness.ws(TAKER);
    await takerWs.connect();
    await takerWs.auth();
    const takerPushes: SubscriptionPush[] = [];
    await takerWs.subscribe(['block_rfq.taker.any'], (push) => takerPushes.push(push));

    const legs = [
      { instrumentName: call70, quantity: '25', side: 'buy' as const },
      { instrumentName: call75, quantity: '25', side: 'sell' as const },
    ];
    await refusedWith(maker1.call('block/rfqs/create_rfq', { legs }), 'forbidden');
    const rfq = (await taker.call('block/rfqs/create_rfq', { legs, label: 'e2e' })) as Rfq;
    assert.equal(rfq.role, 'taker');
    assert.equal(rfq.status, 'created');
    assert.equal(rfq.quantity, '25');
    assert.deepEqual(
      rfq.legs.map((l) => l.ratio),
      ['1', '1'],
    );
    assert.match(rfq.comboId ?? '', /^BTC-CS-/);

    const seen1 = (await maker1.call('block/rfqs/get_rfqs', {})) as { results: Rfq[] };
    const seen2 = (await maker2.call('block/rfqs/get_rfqs', {})) as { results: Rfq[] };
    const id1 = seen1.results[0]!.blockRfqId;
    const id2 = seen2.results[0]!.blockRfqId;
    assert.equal(seen1.results[0]!.role, 'maker');
    assert.deepEqual(seen1.results[0]!.makers, []);
    assert.equal(new Set([rfq.blockRfqId, id1, id2]).size, 3);
    await until(() => makerPushes.some((p) => (p.data as Rfq).blockRfqId === id1));

    await refusedWith(
      taker.call('block/rfqs/create_quote', { blockRfqId: id1, ...spreadAsk('0.05') }),
      'forbidden',
    );
    await refusedWith(
      maker1.call('block/rfqs/create_quote', { blockRfqId: rfq.blockRfqId, ...spreadAsk('0.05') }),
      'not_found',
    );
    await refusedWith(
      maker1.call('block/rfqs/create_quote', { blockRfqId: id2, ...spreadAsk('0.05') }),
      'not_found',
    );
    const q1 = (await maker1.call('block/rfqs/create_quote', { blockRfqId: id1, ...spreadAsk('0.05') })) as {
      quoteId: string;
      price: string;
      status: string;
      replaced: boolean;
    };
    assert.equal(q1.price, '0.02');
    assert.equal(q1.status, 'open');
    assert.equal(q1.replaced, false);
    const q2 = (await maker2.call('block/rfqs/create_quote', { blockRfqId: id2, ...spreadAsk('0.045') })) as {
      quoteId: string;
    };

    await refusedWith(
      taker.call('block/rfqs/accept', { blockRfqId: rfq.blockRfqId, side: 'buy' as const, price: '0.02' }),
      'rfq_not_open',
    );
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    await until(() => takerPushes.some((p) => (p.data as Rfq).status === 'open'));

    // Cancel race: maker2's better quote is cancelled before the accept and never trades.
    await maker2.call('block/rfqs/cancel_quote', { quoteId: q2.quoteId });
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy' as const,
      price: '0.02',
    })) as { rfq: Rfq; blockTrades: { quoteId: string; tradeIds: string[]; price: string }[] };
    assert.equal(accepted.rfq.status, 'filled');
    assert.equal(accepted.blockTrades.length, 1);
    assert.equal(accepted.blockTrades[0]!.quoteId, q1.quoteId);
    assert.equal(accepted.blockTrades[0]!.tradeIds.length, 2);
    const takerAccount = harness.credentials[TAKER]!.accountIds[0]!;
    const maker2Account = harness.credentials[MAKER2]!.accountIds[0]!;
    assert.equal(core.venue.position(takerAccount, call70)?.size, 250);
    assert.equal(core.venue.position(maker2Account, call70)?.size ?? 0, 0);
    // Each side's trade shows its own id of the RFQ (spec 4.8: the maker's id is not the taker's).
    const blockTrade = core.venue.recentTrades(call70, 100).find((t) => t.blockRfqId === rfq.blockRfqId)!;
    const option = core.venue.instrument(call70)!.instrument;
    assert.equal(tradeToWire(blockTrade, blockTrade.maker, option, () => undefined).blockRfqId, id1);
    assert.equal(
      tradeToWire(blockTrade, blockTrade.taker, option, () => undefined).blockRfqId,
      rfq.blockRfqId,
    );

    const trades = (await maker2.call('block/rfqs/get_trades', { currency: 'any' })) as {
      continuation: string | null;
      results: { blockRfqId: string; quantity: string; trades: { price: string }[] }[];
    };
    assert.equal(trades.continuation, null);
    assert.equal(trades.results.length, 1);
    assert.equal(trades.results[0]!.blockRfqId, rfq.blockRfqId);
    assert.equal(trades.results[0]!.trades[0]!.price, '0.02');

    const instruments = (await taker.call('block/rfqs/get_instruments', {
      currency: 'BTC',
      kind: 'option',
    })) as {
      results: { instrumentName: string; kind: string; marginKind: string }[];
    };
    assert.ok(
      instruments.results.some((i) => i.instrumentName === call70 && i.marginKind === 'reversed'),
      `${call70} is listed as reversed`,
    );
    // Any case, as the other Block RFQ currency filters; an unknown symbol is still refused.
    const lower = (await taker.call('block/rfqs/get_instruments', {
      currency: 'btc',
      kind: 'option',
    })) as typeof instruments;
    assert.deepEqual(lower, instruments);
    await refusedWith(taker.call('block/rfqs/get_instruments', { currency: 'xyz' }), 'invalid_arguments');

    // Block trades are trades: they count in the 24 h volume and change positions, hence the
    // open interest (the taker is long 25 of the lower call, maker 1 short).
    const ticker70 = await taker.call('public/ticker', { instrumentName: call70 });
    assert.equal(ticker70.openInterest, '25');
    assert.deepEqual(ticker70.stats, { volume: '25', high: '0.05', low: '0.05' });
    const ticker75 = await taker.call('public/ticker', { instrumentName: call75 });
    assert.equal(ticker75.openInterest, '25');
    assert.deepEqual(ticker75.stats, { volume: '25', high: '0.03', low: '0.03' });
  });

  test('expiry by virtual clock and wrong ids', async () => {
    const taker = harness.http(TAKER);
    const legs = [{ instrumentName: call70, quantity: '25', side: 'buy' as const }];
    const rfq = (await taker.call('block/rfqs/create_rfq', { legs, makers: ['MAKER1'] })) as Rfq;
    assert.deepEqual(rfq.makers, ['MAKER1']);
    const seen2 = (await harness.http(MAKER2).call('block/rfqs/get_rfqs', { status: 'created' })) as {
      results: Rfq[];
    };
    assert.equal(seen2.results.length, 0, 'MAKER2 was not asked');
    await refusedWith(taker.call('block/rfqs/cancel_rfq', { blockRfqId: '999999' }), 'not_found');
    await refusedWith(
      harness.http(MAKER1).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId }),
      'forbidden',
    );
    core.clock.advance(300_000);
    await core.ports.submit({ type: 'timer' });
    const mine = (await taker.call('block/rfqs/get_rfqs', { blockRfqId: rfq.blockRfqId })) as {
      results: Rfq[];
    };
    assert.equal(mine.results[0]!.status, 'expired');
    await refusedWith(taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId }), 'rfq_not_open');
  });

  test('an anonymous RFQ needs 5 makers: without a list the two known desks are too few', async () => {
    const taker = harness.http(TAKER);
    const legs = [{ instrumentName: call70, quantity: '25', side: 'buy' as const }];
    await assert.rejects(
      taker.call('block/rfqs/create_rfq', { legs, disclosed: false }),
      (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.code, ERROR_CATALOGUE.anonymous_rfq_too_few_makers.code);
        assert.equal(error.data?.field, 'disclosed');
        return true;
      },
    );
    await refusedWith(
      taker.call('block/rfqs/create_rfq', { legs, disclosed: false, makers: ['MAKER1', 'MAKER2'] }),
      'anonymous_rfq_too_few_makers',
    );
  });

  test("AON priority, a GTC accept that fires on a later quote, and allocations only to the key's own user", async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const maker2 = harness.http(MAKER2);
    const other = harness.credentials[3]!;
    const legs = [
      { instrumentName: call70, quantity: '50', side: 'buy' as const },
      { instrumentName: call75, quantity: '50', side: 'sell' as const },
    ];
    const takerUser = harness.credentials[TAKER]!.userId;
    // A key acts on its own user's accounts only: no allocating positions to someone else.
    await refusedWith(
      taker.call('block/rfqs/create_rfq', {
        legs,
        tradeAllocations: [{ amount: '12.5', userId: other.userId }],
      }),
      'account_not_owned',
    );
    const clientInfo = { clientId: 7, clientLinkId: 8, name: 9 };
    const rfq = (await taker.call('block/rfqs/create_rfq', {
      legs,
      tradeAllocations: [
        { amount: '12.5', userId: takerUser },
        { amount: '5', clientInfo },
      ],
    })) as Rfq & { tradeAllocations: unknown[] };
    // clientInfo.name (an integer, spec 2.8) is taken and echoed.
    assert.deepEqual(rfq.tradeAllocations, [
      { amount: '12.5', userId: takerUser },
      { amount: '5', clientInfo },
    ]);
    await refusedWith(
      taker.call('block/rfqs/create_rfq', {
        legs,
        tradeAllocations: [{ amount: '50.1', userId: takerUser }],
      }),
      'invalid_amount',
    );
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const id1 = ((await maker1.call('block/rfqs/get_rfqs', { status: 'open' })) as { results: Rfq[] })
      .results[0]!.blockRfqId;
    const id2 = ((await maker2.call('block/rfqs/get_rfqs', { status: 'open' })) as { results: Rfq[] })
      .results[0]!.blockRfqId;
    const quote = (quantity: string, instruction: 'all_or_none' | 'any_part_of') => ({
      executionInstruction: instruction,
      side: 'sell' as const,
      quantity,
      legs: [
        { instrumentName: call70, price: '0.05', ratio: '1', side: 'buy' as const },
        { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' as const },
      ],
    });
    // GTC below every quote: leaves a trigger.
    const gtc = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy' as const,
      price: '0.02',
      timeInForce: 'good_til_cancelled',
    })) as { rfq: Rfq; trigger: { price: string } | null; blockTrades: unknown[] };
    assert.equal(gtc.trigger?.price, '0.02');
    assert.equal(gtc.blockTrades.length, 0);
    assert.deepEqual(
      gtc.rfq.tradeTriggers?.map((t) => [t.side, t.price, t.quantity]),
      [['buy', '0.02', '50']],
    );
    await maker1.call('block/rfqs/create_quote', { blockRfqId: id1, ...quote('25', 'any_part_of') });
    // maker2's AON quote for the whole size completes the trigger ahead of maker1's at the same price.
    const aon = (await maker2.call('block/rfqs/create_quote', {
      blockRfqId: id2,
      ...quote('50', 'all_or_none'),
    })) as {
      quoteId: string;
    };
    const after = (await taker.call('block/rfqs/get_rfqs', { blockRfqId: rfq.blockRfqId })) as {
      results: Rfq[];
    };
    assert.equal(after.results[0]!.status, 'filled');
    const quotes2 = (await maker2.call('block/rfqs/get_quotes', { quoteId: aon.quoteId })) as {
      status: string;
      filledQuantity: string;
    }[];
    assert.deepEqual(
      quotes2.map((q) => [q.status, q.filledQuantity]),
      [['filled', '50']],
    );
    const takerAccount = harness.credentials[TAKER]!.accountIds[0]!;
    assert.equal(core.venue.position(other.accountIds[0]!, call70)?.size ?? 0, 0);
    const page = (await taker.call('block/rfqs/get_trades', { currency: 'BTC', count: 1 })) as {
      continuation: string | null;
      results: { blockRfqId: string; timestamp: number }[];
    };
    assert.equal(page.results[0]!.blockRfqId, rfq.blockRfqId);
    assert.equal(page.continuation, `${page.results[0]!.timestamp}:${rfq.blockRfqId}`);
    const next = (await taker.call('block/rfqs/get_trades', {
      currency: 'BTC',
      continuation: page.continuation,
    })) as {
      results: { blockRfqId: string }[];
    };
    assert.ok(
      next.results.every((t) => t.blockRfqId !== rfq.blockRfqId),
      'the next page repeats no trade of this RFQ',
    );
    assert.equal(
      core.venue.position(takerAccount, call70)?.size,
      250 + 500,
      'first flow 25 BTC, this one 50 BTC (its allocation is booked to the same user)',
    );
  });

  test('accept reads leg ratios as numbers; currency filters name a known currency', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    for (const method of ['block/rfqs/get_trades', 'block/rfqs/get_rfqs'] as const) {
      await assert.rejects(taker.call(method, { currency: 'XYZ' }), (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.code, ERROR_CATALOGUE.invalid_arguments.code, error.message);
        assert.equal(error.data?.field, 'currency');
        return true;
      });
    }
    const { rfq, id1 } = await openSpreadRfqToMaker1();
    // create_quote takes "1.0" as ratio 1; accept must read it the same way.
    await maker1.call('block/rfqs/create_quote', {
      blockRfqId: id1,
      executionInstruction: 'all_or_none',
      side: 'sell',
      quantity: '25',
      legs: [
        { instrumentName: call70, price: '0.05', ratio: '1.0', side: 'buy' },
        { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' },
      ],
    });
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: '0.02',
      legs: [
        { instrumentName: call75, ratio: '1', side: 'sell' },
        { instrumentName: call70, ratio: '1.0', side: 'buy' },
      ],
    })) as { rfq: Rfq };
    assert.equal(accepted.rfq.status, 'filled');
  });

  test('a waiting GTC accept shows on the taker view and is withdrawn with cancel_trigger', async () => {
    const taker = harness.http(TAKER);
    const legs = [{ instrumentName: call70, quantity: '25', side: 'buy' as const }];
    const rfq = (await taker.call('block/rfqs/create_rfq', { legs })) as Rfq;
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy' as const,
      price: '0.01',
      timeInForce: 'good_til_cancelled',
    });
    const listed = (await taker.call('block/rfqs/get_rfqs', { blockRfqId: rfq.blockRfqId })) as {
      results: Rfq[];
    };
    assert.deepEqual(
      listed.results[0]!.tradeTriggers?.map((t) => [t.side, t.price, t.quantity]),
      [['buy', '0.01', '25']],
    );
    await refusedWith(
      harness.http(MAKER1).call('block/rfqs/cancel_trigger', { blockRfqId: rfq.blockRfqId }),
      'forbidden',
    );
    await refusedWith(
      taker.call('block/rfqs/cancel_trigger', { blockRfqId: rfq.blockRfqId, side: 'sell' }),
      'not_found',
    );
    const after = (await taker.call('block/rfqs/cancel_trigger', { blockRfqId: rfq.blockRfqId })) as Rfq;
    assert.deepEqual(after.tradeTriggers, []);
    assert.equal(after.status, 'open');
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('hedge: the taker sees and bounds each hedge price; each maker books the hedge its quote shows', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const maker2 = harness.http(MAKER2);
    const perp = 'BTC-PERPETUAL';
    const perpSize = async (client: typeof taker) =>
      Number(
        (
          (await client.call('private/get_positions', { currency: 'BTC' })) as {
            instrumentName: string;
            size: string;
          }[]
        ).find((p) => p.instrumentName === perp)?.size ?? '0',
      );
    const before = [await perpSize(taker), await perpSize(maker1), await perpSize(maker2)];
    // 50 of the spread, hedged by selling 30 USD (3 lots of 10) of the perpetual.
    const rfq = (await taker.call('block/rfqs/create_rfq', {
      legs: [
        { instrumentName: call70, quantity: '50', side: 'buy' },
        { instrumentName: call75, quantity: '50', side: 'sell' },
      ],
      hedge: { instrumentName: perp, quantity: '30', side: 'sell', price: '60000' },
    })) as Rfq;
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const makerId = async (client: typeof taker) =>
      ((await client.call('block/rfqs/get_rfqs', { status: 'open' })) as { results: Rfq[] }).results[0]!
        .blockRfqId;
    // Maker 1 trades the RFQ's hedge price; maker 2 restates its share (10 of 30) at its own price.
    await maker1.call('block/rfqs/create_quote', { blockRfqId: await makerId(maker1), ...spreadAsk('0.05') });
    const q2 = (await maker2.call('block/rfqs/create_quote', {
      blockRfqId: await makerId(maker2),
      ...spreadAsk('0.0505'),
      hedge: { instrumentName: perp, quantity: '10', side: 'sell', price: '60010' },
    })) as { quoteId: string; hedge?: { quantity: string } };
    assert.equal(q2.hedge?.quantity, '10');

    const view = (await taker.call('block/rfqs/get_rfqs', { blockRfqId: rfq.blockRfqId })) as {
      results: { asks: { price: string; hedgePrice?: string }[] }[];
    };
    assert.deepEqual(
      view.results[0]!.asks.map((a) => [a.price, a.hedgePrice]),
      [
        ['0.02', '60000'],
        ['0.0205', '60010'],
      ],
    );
    // The taker sells the hedge: a worst hedge price of 60005 passes over maker 1's 60000.
    const hedge = (price: string) => ({ instrumentName: perp, quantity: '30', side: 'sell' as const, price });
    await assert.rejects(
      taker.call('block/rfqs/accept', {
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: '0.0205',
        hedge: hedge('60005'),
      }),
      (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.code, ERROR_CATALOGUE.not_fully_filled.code, error.message);
        assert.equal(error.data?.available, '25');
        return true;
      },
    );
    await refusedWith(
      taker.call('block/rfqs/accept', {
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: '0.0205',
        hedge: { ...hedge('60000'), side: 'buy' },
      }),
      'invalid_arguments',
    );
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: '0.0205',
      hedge: hedge('60000'),
    })) as { rfq: Rfq; blockTrades: { quoteId: string; hedgeQuantity?: string }[] };
    assert.equal(accepted.rfq.status, 'filled');
    // Each quote's share of the hedge is floor(3 × 25 / 50) = 1 lot (10): neither maker books
    // more than its quote showed; the third lot is booked to no one.
    assert.deepEqual(
      accepted.blockTrades.map((t) => t.hedgeQuantity),
      ['10', '10'],
    );
    const trades = (await taker.call('block/rfqs/get_trades', { currency: 'any' })) as {
      results: {
        blockRfqId: string;
        legs: { instrumentName: string; price: string }[];
        hedge?: { quantity: string; price: string };
        trades: { price: string; hedgeQuantity?: string }[];
      }[];
    };
    const listed = trades.results.find((t) => t.blockRfqId === rfq.blockRfqId)!;
    assert.deepEqual(
      listed.trades.map((t) => [t.price, t.hedgeQuantity]),
      [
        ['0.02', '10'],
        ['0.0205', '10'],
      ],
    );
    assert.equal(listed.hedge?.quantity, '20');
    // Two makers at different prices: the legs and the hedge show the fills' amount-weighted
    // averages (25 lots at 0.05 and 25 at 0.0505; 10 USD of hedge at 60000 and 10 at 60010), not
    // the first fill's prices.
    assert.deepEqual(
      listed.legs.map((leg) => [leg.instrumentName, leg.price]),
      [
        [call70, '0.05025'],
        [call75, '0.03'],
      ],
    );
    assert.equal(listed.hedge?.price, '60005');
    const after = [await perpSize(taker), await perpSize(maker1), await perpSize(maker2)];
    const moved = after.map((size, index) => size - before[index]!);
    assert.deepEqual(moved, [-20, 10, 10]);
  });

  test('appName: every quote object names the desk that placed it, and reaches that desk only', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const maker2 = harness.http(MAKER2);
    const subscribe = async (index: number, channel: string) => {
      const ws = harness.ws(index);
      await ws.connect();
      await ws.auth();
      const pushes: SubscriptionPush[] = [];
      await ws.subscribe([channel], (push) => pushes.push(push));
      return pushes;
    };
    const maker1Pushes = await subscribe(MAKER1, 'block_rfq.maker.any');
    const maker2Pushes = await subscribe(MAKER2, 'block_rfq.maker.any');
    const takerPushes = await subscribe(TAKER, 'block_rfq.taker.any');
    interface WireQuote {
      quoteId: string;
      blockRfqId: string;
      status: string;
      replaced: boolean;
      appName?: string;
    }
    type MakerRfq = Rfq & { quotes?: WireQuote[] };

    const rfq = (await taker.call('block/rfqs/create_rfq', {
      legs: [
        { instrumentName: call70, quantity: '25', side: 'buy' },
        { instrumentName: call75, quantity: '25', side: 'sell' },
      ],
    })) as Rfq;
    // Ids come from one counter: the newest RFQ a desk sees is this one.
    const makerId = async (client: typeof taker) => {
      const listed = (await client.call('block/rfqs/get_rfqs', { status: 'created' })) as { results: Rfq[] };
      return listed.results.map((r) => r.blockRfqId).sort((a, b) => Number(b) - Number(a))[0]!;
    };
    const id1 = await makerId(maker1);
    const id2 = await makerId(maker2);

    const created = (await maker1.call('block/rfqs/create_quote', {
      blockRfqId: id1,
      ...spreadAsk('0.05'),
    })) as WireQuote;
    assert.equal(created.appName, 'MAKER1');
    const other = (await maker2.call('block/rfqs/create_quote', {
      blockRfqId: id2,
      ...spreadAsk('0.051'),
    })) as WireQuote;
    assert.equal(other.appName, 'MAKER2');

    const edited = (await maker1.call('block/rfqs/edit_quote', {
      quoteId: created.quoteId,
      ...spreadAsk('0.049'),
    })) as WireQuote;
    assert.equal(edited.replaced, true);
    assert.equal(edited.appName, 'MAKER1');

    const open = (await maker1.call('block/rfqs/get_quotes', { blockRfqId: id1 })) as WireQuote[];
    assert.deepEqual(
      open.map((q) => [q.quoteId, q.appName]),
      [[created.quoteId, 'MAKER1']],
    );
    const byId = (await maker2.call('block/rfqs/get_quotes', { quoteId: other.quoteId })) as WireQuote[];
    assert.deepEqual(
      byId.map((q) => q.appName),
      ['MAKER2'],
    );
    // Another desk's quote is not found by id: a quote object reaches its own desk only.
    assert.deepEqual(await maker2.call('block/rfqs/get_quotes', { quoteId: created.quoteId }), []);

    // The maker view (get_rfqs and the maker push) lists the desk's own quotes, named.
    const view1 = (await maker1.call('block/rfqs/get_rfqs', { blockRfqId: id1 })) as { results: MakerRfq[] };
    assert.deepEqual(
      view1.results[0]!.quotes!.map((q) => [q.quoteId, q.appName]),
      [[created.quoteId, 'MAKER1']],
    );
    const pushedQuotes = (pushes: SubscriptionPush[], id: string) =>
      pushes.flatMap((p) =>
        (p.data as MakerRfq).blockRfqId === id ? ((p.data as MakerRfq).quotes ?? []) : [],
      );
    await until(() => pushedQuotes(maker1Pushes, id1).some((q) => q.replaced));
    await until(() => pushedQuotes(maker2Pushes, id2).length > 0);
    assert.deepEqual([...new Set(pushedQuotes(maker1Pushes, id1).map((q) => q.appName))], ['MAKER1']);
    assert.deepEqual(
      [...new Set(maker2Pushes.flatMap((p) => ((p.data as MakerRfq).quotes ?? []).map((q) => q.appName)))],
      ['MAKER2'],
    );

    // The taker sees no quote objects: book entries name makers as before, and no appName.
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    await until(() =>
      takerPushes.some(
        (p) => (p.data as Rfq).blockRfqId === rfq.blockRfqId && (p.data as Rfq).status === 'open',
      ),
    );
    const takerView = (await taker.call('block/rfqs/get_rfqs', { blockRfqId: rfq.blockRfqId })) as {
      results: (Rfq & { quotes?: unknown })[];
    };
    assert.equal(takerView.results[0]!.quotes, undefined);
    assert.deepEqual(
      takerView.results[0]!.asks!.map((a) => a.makers),
      [['MAKER1'], ['MAKER2']],
    );
    assert.ok(!JSON.stringify(takerView).includes('appName'), 'the taker view names no desk');
    assert.ok(!JSON.stringify(takerPushes).includes('appName'), 'the taker pushes name no desk');

    const cancelled = (await maker1.call('block/rfqs/cancel_quote', {
      quoteId: created.quoteId,
    })) as WireQuote;
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.appName, 'MAKER1');
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('a zero leg ratio is refused naming that leg ratio, in create_quote and accept', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const { rfq, id1 } = await openSpreadRfqToMaker1();
    const zeroRatio = (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.code, ERROR_CATALOGUE.invalid_arguments.code, error.message);
      assert.equal(error.data?.field, 'legs[0].ratio', error.message);
      return true;
    };
    await assert.rejects(
      maker1.call('block/rfqs/create_quote', {
        blockRfqId: id1,
        executionInstruction: 'all_or_none',
        side: 'sell',
        quantity: '25',
        legs: [
          { instrumentName: call70, price: '0.05', ratio: '0', side: 'buy' },
          { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' },
        ],
      }),
      zeroRatio,
    );
    await assert.rejects(
      taker.call('block/rfqs/accept', {
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: '0.02',
        legs: [
          { instrumentName: call70, ratio: '0', side: 'buy' },
          { instrumentName: call75, ratio: '1', side: 'sell' },
        ],
      }),
      zeroRatio,
    );
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('edit_quote keeps the expiry and label it leaves out, and replaces those it sends', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const { rfq, id1 } = await openSpreadRfqToMaker1();
    interface WireQuote {
      quoteId: string;
      label: string;
      expiresAt: number | null;
      price: string;
    }
    const expiry = core.clock.now() + 60_000;
    const created = (await maker1.call('block/rfqs/create_quote', {
      blockRfqId: id1,
      label: 'q-spread',
      expiresAt: expiry,
      ...spreadAsk('0.05'),
    })) as WireQuote;
    const priceOnly = (await maker1.call('block/rfqs/edit_quote', {
      quoteId: created.quoteId,
      ...spreadAsk('0.049'),
    })) as WireQuote;
    assert.equal(priceOnly.price, '0.019', 'the edit replaced the price');
    assert.equal(priceOnly.expiresAt, expiry, 'an edit without expiresAt keeps the expiry');
    assert.equal(priceOnly.label, 'q-spread', 'an edit without label keeps the label');
    const withNull = (await maker1.call('block/rfqs/edit_quote', {
      quoteId: created.quoteId,
      label: null,
      expiresAt: null,
      ...spreadAsk('0.048'),
    })) as WireQuote;
    assert.equal(withNull.expiresAt, expiry, 'null is the same as leaving expiresAt out (spec 4)');
    assert.equal(withNull.label, 'q-spread', 'null is the same as leaving label out (spec 4)');
    const replaced = (await maker1.call('block/rfqs/edit_quote', {
      quoteId: created.quoteId,
      label: 'q-2',
      expiresAt: expiry + 1_000,
      ...spreadAsk('0.048'),
    })) as WireQuote;
    assert.equal(replaced.expiresAt, expiry + 1_000, 'a sent expiresAt replaces the expiry');
    assert.equal(replaced.label, 'q-2', 'a sent label replaces the label');
    // The kept expiry still ends the quote.
    core.clock.advance(61_001);
    await core.ports.submit({ type: 'timer' });
    const [after] = (await maker1.call('block/rfqs/get_quotes', { quoteId: created.quoteId })) as {
      status: string;
    }[];
    assert.equal(after?.status, 'expired', 'the quote expired at its kept expiry');
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });
});
