/**
 * Block RFQ handlers (src/api/methods/rfq.ts): a key acts on its own user's RFQs only, another
 * desk's quote is indistinguishable from a missing one, and get_rfqs answers by the key's roles.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Harness } from '../support/gateway-harness.ts';
import { type RfqCore, startRfqApi } from '../support/rfq-api.ts';

const TAKER = 0;
const MAKER1 = 1;
const MAKER2 = 2;
const MULTI = 3; // another user, also a taker

interface Rfq {
  blockRfqId: string;
  role: string;
  status: string;
}

async function refusedWith(promise: Promise<unknown>, name: string, field?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.errorName, name, error.message);
    if (field !== undefined) assert.equal(error.data?.field, field, JSON.stringify(error.data));
    return true;
  });
}

describe('Block RFQ handlers: ownership and roles', () => {
  let harness: Harness;
  let core: RfqCore;
  let call70: string;
  let call75: string;
  before(async () => {
    ({ core, harness, call70, call75 } = await startRfqApi());
  });
  after(() => harness.close());

  const legs = () => [
    { instrumentName: call70, quantity: '25', side: 'buy' as const },
    { instrumentName: call75, quantity: '25', side: 'sell' as const },
  ];

  /** An open RFQ of the taker's user, asked of both desks, and each desk's own id for it. */
  async function openRfq(): Promise<{ rfq: Rfq; id1: string; id2: string }> {
    const rfq = (await harness.http(TAKER).call('block/rfqs/create_rfq', {
      legs: legs(),
      makers: ['MAKER1', 'MAKER2'],
    })) as Rfq;
    core.clock.advance(5_000);
    await core.ports.submit({ type: 'timer' });
    const mine = async (index: number) =>
      ((await harness.http(index).call('block/rfqs/get_rfqs', { status: 'open' })) as { results: Rfq[] })
        .results[0]!.blockRfqId;
    return { rfq, id1: await mine(MAKER1), id2: await mine(MAKER2) };
  }

  test("another user's taker key cannot cancel, accept or withdraw triggers of the RFQ", async () => {
    const { rfq } = await openRfq();
    const stranger = harness.http(MULTI);
    await refusedWith(stranger.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId }), 'not_found');
    await refusedWith(
      stranger.call('block/rfqs/cancel_trigger', { blockRfqId: rfq.blockRfqId }),
      'not_found',
    );
    await refusedWith(
      stranger.call('block/rfqs/accept', { blockRfqId: rfq.blockRfqId, side: 'buy', price: '0.05' }),
      'not_found',
    );
    const listed = (await harness.http(TAKER).call('block/rfqs/get_rfqs', {
      blockRfqId: rfq.blockRfqId,
    })) as { results: Rfq[] };
    assert.equal(listed.results[0]!.status, 'open', 'the stranger changed nothing');
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test("editing another desk's quote answers as for a missing quote (field quoteId)", async () => {
    const { rfq, id1 } = await openRfq();
    const ask = {
      executionInstruction: 'any_part_of' as const,
      side: 'sell' as const,
      quantity: '25',
      legs: [
        { instrumentName: call70, price: '0.05', ratio: '1', side: 'buy' as const },
        { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' as const },
      ],
    };
    const quote = (await harness
      .http(MAKER1)
      .call('block/rfqs/create_quote', { blockRfqId: id1, ...ask })) as {
      quoteId: string;
    };
    const missing = harness.http(MAKER2).call('block/rfqs/edit_quote', { quoteId: '999999', ...ask });
    await refusedWith(missing, 'not_found', 'quoteId');
    const foreign = harness.http(MAKER2).call('block/rfqs/edit_quote', { quoteId: quote.quoteId, ...ask });
    await refusedWith(foreign, 'not_found', 'quoteId');
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('get_rfqs of a maker-only key does not list the taker RFQs of its user', async () => {
    const taker = harness.credentials[TAKER]!;
    const { rfq } = await openRfq();
    const { record, apiSecret } = harness.keyStore.createApiKey(
      { userId: taker.userId, roles: ['maker'], deskName: 'MAKER3' },
      core.ports.now(),
    );
    const makerOnly = new HttpClient({
      baseUrl: harness.baseUrl,
      credentials: { apiKey: record.apiKey, apiSecret },
      now: () => core.ports.now(),
    });
    const seen = (await makerOnly.call('block/rfqs/get_rfqs', {})) as { results: Rfq[] };
    assert.deepEqual(
      seen.results.filter((r) => r.role === 'taker').map((r) => r.blockRfqId),
      [],
    );
    await harness.http(TAKER).call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });

  test('get_rfqs: a page holding the last RFQ has no continuation', async () => {
    const own = harness.http(MULTI);
    const rfq = (await own.call('block/rfqs/create_rfq', { legs: legs(), makers: ['MAKER1'] })) as Rfq;
    const page = (await own.call('block/rfqs/get_rfqs', { role: 'taker', count: 1 })) as {
      results: Rfq[];
      continuation: string | null;
    };
    assert.deepEqual(
      page.results.map((r) => r.blockRfqId),
      [rfq.blockRfqId],
    );
    assert.equal(page.continuation, null, 'no further page');
    await own.call('block/rfqs/cancel_rfq', { blockRfqId: rfq.blockRfqId });
  });
});
