/**
 * Block RFQ params at the API edge: each refusal names the field at fault, and
 * nothing the taker or maker sent is silently dropped or read wrongly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import type { Harness } from '../support/gateway-harness.ts';
import { type RfqCore, startRfqApi } from '../support/rfq-api.ts';

const TAKER = 0;
const MAKER1 = 1;

type ErrorName = keyof typeof ERROR_CATALOGUE;
/** A refusal with this error and this data.field. */
async function refusedNaming(promise: Promise<unknown>, name: ErrorName, field: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.data?.field, field, error.message);
    assert.equal(error.code, ERROR_CATALOGUE[name].code, error.message);
    return true;
  });
}

interface Rfq {
  blockRfqId: string;
  label?: string;
  status: string;
}

describe('Block RFQ params: refusals name the field, nothing is dropped', () => {
  let harness: Harness;
  let core: RfqCore;
  let call70: string;
  let call75: string;

  before(async () => {
    ({ core, harness, call70, call75 } = await startRfqApi());
  });
  after(() => harness.close());

  const spreadLegs = () => [
    { instrumentName: call70, quantity: '25', side: 'buy' as const },
    { instrumentName: call75, quantity: '25', side: 'sell' as const },
  ];

  /** The taker's 25-lot call spread to MAKER1, open, and MAKER1's id of it. */
  async function openSpread(extra: Record<string, unknown> = {}): Promise<{ rfq: Rfq; id1: string }> {
    const rfq = (await harness.http(TAKER).call('block/rfqs/create_rfq', {
      legs: spreadLegs(),
      makers: ['MAKER1'],
      ...extra,
    })) as Rfq;
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const open = (await harness.http(MAKER1).call('block/rfqs/get_rfqs', { status: 'open' })) as {
      results: Rfq[];
    };
    return { rfq, id1: open.results[0]!.blockRfqId };
  }

  test('create_rfq: an unknown maker desk is refused naming makers[i]', async () => {
    await refusedNaming(
      harness
        .http(TAKER)
        .call('block/rfqs/create_rfq', { legs: spreadLegs(), makers: ['MAKER1', 'NO_SUCH_DESK'] }),
      'invalid_arguments',
      'makers[1]',
    );
  });

  test('create_rfq: grid errors name the leg quantity, the allocation amount and the hedge price', async () => {
    const taker = harness.http(TAKER);
    await refusedNaming(
      taker.call('block/rfqs/create_rfq', {
        legs: [spreadLegs()[0], { instrumentName: call75, quantity: '25.00001', side: 'sell' }],
      } as never),
      'precision_exceeded',
      'legs[1].quantity',
    );
    await refusedNaming(
      taker.call('block/rfqs/create_rfq', {
        legs: spreadLegs(),
        tradeAllocations: [
          { amount: '12.5', clientInfo: { clientId: 1, clientLinkId: 2 } },
          { amount: '1.00001', clientInfo: { clientId: 1, clientLinkId: 2 } },
        ],
      }),
      'precision_exceeded',
      'tradeAllocations[1].amount',
    );
    await refusedNaming(
      taker.call('block/rfqs/create_rfq', {
        legs: spreadLegs(),
        hedge: { instrumentName: 'BTC-PERPETUAL', quantity: '30', side: 'sell', price: '60000.00001' },
      }),
      'precision_exceeded',
      'hedge.price',
    );
  });

  test("create_rfq keeps the taker's label", async () => {
    const rfq = (await harness.http(TAKER).call('block/rfqs/create_rfq', {
      legs: spreadLegs(),
      label: 'desk-7 spread',
    })) as Rfq;
    assert.equal(rfq.label, 'desk-7 spread');
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test("accept: legs that differ from the RFQ's (an extra leg, a flipped side) are refused naming legs", async () => {
    const taker = harness.http(TAKER);
    const { rfq } = await openSpread();
    const accept = (legs: unknown[]) =>
      taker.call('block/rfqs/accept', {
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: '0.02',
        legs: legs as never,
      });
    const wrongLegs: [string, { instrumentName: string; ratio: string; side: string }[]][] = [
      [
        'every RFQ leg, plus one more',
        [
          { instrumentName: call70, ratio: '1', side: 'buy' },
          { instrumentName: call75, ratio: '1', side: 'sell' },
          { instrumentName: call75, ratio: '1', side: 'sell' },
        ],
      ],
      [
        'both sides flipped: the opposite structure',
        [
          { instrumentName: call70, ratio: '1', side: 'sell' },
          { instrumentName: call75, ratio: '1', side: 'buy' },
        ],
      ],
      [
        'another ratio (2:2 where the RFQ is 1:1)',
        [
          { instrumentName: call70, ratio: '2', side: 'buy' },
          { instrumentName: call75, ratio: '2', side: 'sell' },
        ],
      ],
    ];
    for (const [, legs] of wrongLegs) await refusedNaming(accept(legs), 'invalid_arguments', 'legs');
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('leg ratios: at most 2 decimals (spec 8) and whole, refused naming the leg ratio', async () => {
    const taker = harness.http(TAKER);
    const { rfq } = await openSpread();
    for (const ratio of ['1.000', '1.5']) {
      await refusedNaming(
        taker.call('block/rfqs/accept', {
          blockRfqId: rfq.blockRfqId,
          side: 'buy',
          price: '0.02',
          legs: [
            { instrumentName: call70, ratio, side: 'buy' },
            { instrumentName: call75, ratio: '1', side: 'sell' },
          ],
        }),
        'invalid_arguments',
        'legs[0].ratio',
      );
    }
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });
  const quoteLegs = (price70: string) => [
    { instrumentName: call70, price: price70, ratio: '1', side: 'buy' as const },
    { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' as const },
  ];

  test("create_quote: a price that is not the legs' strategy price is refused naming price", async () => {
    const { rfq, id1 } = await openSpread();
    await refusedNaming(
      harness.http(MAKER1).call('block/rfqs/create_quote', {
        blockRfqId: id1,
        executionInstruction: 'any_part_of',
        side: 'sell',
        quantity: '25',
        price: '0.5',
        legs: quoteLegs('0.05'),
      }),
      'invalid_price',
      'price',
    );
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('accept: a partial quantity trades that quantity, not the whole RFQ', async () => {
    const taker = harness.http(TAKER);
    const legs = [
      { instrumentName: call70, quantity: '100', side: 'buy' as const },
      { instrumentName: call75, quantity: '100', side: 'sell' as const },
    ];
    const rfq = (await taker.call('block/rfqs/create_rfq', { legs, makers: ['MAKER1'] })) as Rfq & {
      minTradeAmount: string;
    };
    assert.ok(Number(rfq.minTradeAmount) < 100, rfq.minTradeAmount);
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const open = (await harness.http(MAKER1).call('block/rfqs/get_rfqs', { status: 'open' })) as {
      results: Rfq[];
    };
    await harness.http(MAKER1).call('block/rfqs/create_quote', {
      blockRfqId: open.results[0]!.blockRfqId,
      executionInstruction: 'any_part_of',
      side: 'sell',
      quantity: '100',
      legs: quoteLegs('0.05'),
    });
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: '0.02',
      quantity: rfq.minTradeAmount,
    })) as { blockTrades: { quantity: string; price: string }[] };
    assert.deepEqual(
      accepted.blockTrades.map((t) => [t.quantity, t.price]),
      [[rfq.minTradeAmount, '0.02']],
    );
  });

  test('create_quote: expiresAt is kept, and an off-grid leg price is refused naming that leg price', async () => {
    const maker1 = harness.http(MAKER1);
    const { rfq, id1 } = await openSpread();
    const expiresAt = core.ports.now() + 60_000;
    const quote = (await maker1.call('block/rfqs/create_quote', {
      blockRfqId: id1,
      executionInstruction: 'all_or_none',
      side: 'sell',
      quantity: '25',
      legs: quoteLegs('0.05'),
      expiresAt,
    })) as { expiresAt: number | null };
    assert.equal(quote.expiresAt, expiresAt);
    await refusedNaming(
      maker1.call('block/rfqs/create_quote', {
        blockRfqId: id1,
        executionInstruction: 'all_or_none',
        side: 'sell',
        quantity: '25',
        legs: [quoteLegs('0.05')[0], { ...quoteLegs('0.05')[1], price: '0.03000001' }],
      } as never),
      'precision_exceeded',
      'legs[1].price',
    );
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });
  test('unknown fields are refused naming them: create_rfq legs, create_quote and its legs, accept', async () => {
    const taker = harness.http(TAKER);
    const maker1 = harness.http(MAKER1);
    const unknown = (field: string) => (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.data?.field, field, error.message);
      assert.equal(error.code, ERROR_CATALOGUE.invalid_params.code, error.message);
      return true;
    };
    await assert.rejects(
      taker.call('block/rfqs/create_rfq', {
        legs: [spreadLegs()[0], { ...spreadLegs()[1], ratio: '2' }],
      } as never),
      unknown('legs[1].ratio'),
    );
    const { rfq, id1 } = await openSpread();
    const quote = { blockRfqId: id1, executionInstruction: 'all_or_none', side: 'sell', quantity: '25' };
    await assert.rejects(
      maker1.call('block/rfqs/create_quote', {
        ...quote,
        legs: [quoteLegs('0.05')[0], { ...quoteLegs('0.05')[1], quantity: '5' }],
      } as never),
      unknown('legs[1].quantity'),
    );
    await assert.rejects(
      maker1.call('block/rfqs/create_quote', { ...quote, legs: quoteLegs('0.05'), expiresIn: 1000 } as never),
      unknown('expiresIn'),
    );
    await assert.rejects(
      taker.call('block/rfqs/accept', {
        blockRfqId: rfq.blockRfqId,
        side: 'buy',
        price: '0.02',
        amount: '10',
      } as never),
      unknown('amount'),
    );
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test("create_quote keeps the maker's label; a 65-character label is refused by the schema", async () => {
    const maker1 = harness.http(MAKER1);
    const { rfq, id1 } = await openSpread();
    const quote = (await maker1.call('block/rfqs/create_quote', {
      blockRfqId: id1,
      executionInstruction: 'all_or_none',
      side: 'sell',
      quantity: '25',
      legs: quoteLegs('0.05'),
      label: 'q-1',
    })) as { label: string };
    assert.equal(quote.label, 'q-1');
    await refusedNaming(
      harness.http(TAKER).call('block/rfqs/create_rfq', { legs: spreadLegs(), label: 'x'.repeat(65) }),
      'invalid_params',
      'label',
    );
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('create_quote: an off-grid hedge quantity is refused naming hedge.quantity', async () => {
    const taker = harness.http(TAKER);
    const perp = 'BTC-PERPETUAL';
    const { rfq, id1 } = await openSpread({
      hedge: { instrumentName: perp, quantity: '30', side: 'sell', price: '60000' },
    });
    await refusedNaming(
      harness.http(MAKER1).call('block/rfqs/create_quote', {
        blockRfqId: id1,
        executionInstruction: 'all_or_none',
        side: 'sell',
        quantity: '25',
        legs: quoteLegs('0.05'),
        hedge: { instrumentName: perp, quantity: '30.5', side: 'sell', price: '60000' },
      }),
      'precision_exceeded',
      'hedge.quantity',
    );
    await taker.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });
  test('get_rfqs pages: the continuation page starts after the last RFQ shown, never repeating it', async () => {
    const taker = harness.http(TAKER);
    for (let i = 0; i < 3; i++) await taker.call('block/rfqs/create_rfq', { legs: spreadLegs() });
    type Page = { results: Rfq[]; continuation: string | null };
    const first = (await taker.call('block/rfqs/get_rfqs', { count: 2 })) as Page;
    assert.equal(first.results.length, 2);
    assert.ok(first.continuation !== null);
    const second = (await taker.call('block/rfqs/get_rfqs', {
      count: 2,
      continuation: first.continuation,
    })) as Page;
    const seen = new Set(first.results.map((r) => r.blockRfqId));
    for (const r of second.results) assert.ok(!seen.has(r.blockRfqId), `RFQ ${r.blockRfqId} shown twice`);
  });
});
