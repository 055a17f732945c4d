/**
 * A combo's price band through the whole service: an option combo takes the options' band
 * (±50% of its mark), a future spread the futures' (±5%, at least 10 ticks). Before, every combo
 * took the futures' band, so a straddle could not be sold 6% under its mark although each of its
 * legs could be sold 50% under its own. See docs/decisions.md, "Price band".
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

/** The combo's mark once the market has priced it (listed on first use, priced at the next tick). */
async function markOf(running: TestService, client: HttpClient, instrumentName: string): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const mark = (await client.call('public/ticker', { instrumentName })).markPrice;
    if (mark !== null && mark !== undefined) return Number(mark);
    running.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${instrumentName} has no mark`);
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

describe('combo price band', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('an option combo takes the options band, a future spread the futures band', async () => {
    const client = running.http(0);
    const calls = (await client.call('public/get_instruments', { currency: 'BTC', kind: 'option' }))
      .map((instrument) => instrument.instrumentName)
      .filter((name) => /^BTC-\w+-\d+-C$/.test(name));
    const [, expiry, strike] = calls[Math.floor(calls.length / 2)]!.split('-');
    const straddle = `BTC-STRD-${expiry}-${strike}`;
    const spread = 'BTC-FS-25DEC26_PERP';
    // Only a signed request lists a combo: an anonymous read of an unlisted one lists nothing.
    const anonymous = await fetch(`${running.baseUrl}/api/public/ticker`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rid: 1, method: 'public/ticker', params: { instrumentName: straddle } }),
    });
    const anonymousError = ((await anonymous.json()) as { error: { code: number; data: { field: string } } })
      .error;
    assert.deepEqual([anonymousError.code, anonymousError.data.field], [10020, 'instrumentName']);
    assert.equal(
      (await client.call('public/get_instruments', { currency: 'BTC', kind: 'option_combo' })).some(
        (instrument) => instrument.instrumentName === straddle,
      ),
      false,
    );
    await client.call('public/ticker', { instrumentName: straddle });
    await client.call('public/ticker', { instrumentName: spread });
    const mark = await markOf(running, client, straddle);
    const TICK = 0.0001;
    const ticks = Math.round(mark / TICK);

    // 20% under the mark: inside the options' band, so the sell rests.
    const low = (Math.round(ticks * 0.8) * TICK).toFixed(4);
    const sold = await client.call('private/sell', { instrumentName: straddle, quantity: '0.1', price: low });
    assert.equal(sold.order.orderState, 'open');
    // Past 50% under it: refused, naming the band's edge.
    const tooLow = (Math.floor(ticks * 0.45) * TICK).toFixed(4);
    const error = await refusal(
      client.call('private/sell', { instrumentName: straddle, quantity: '0.1', price: tooLow }),
    );
    assert.equal(error.data?.minPrice, ((ticks - Math.floor(ticks / 2)) * TICK).toFixed(4));

    // A future spread keeps the futures' band: 5% of its mark, at least 10 ticks of 2.5 USD.
    const spreadMark = await markOf(running, client, spread);
    const width = Math.max(Math.floor((Math.abs(spreadMark / 2.5) * 500) / 10_000), 10) * 2.5;
    const above = await refusal(
      client.call('private/buy', {
        instrumentName: spread,
        quantity: '10',
        price: String(spreadMark + width + 2.5),
      }),
    );
    assert.equal(above.data?.maxPrice, String(spreadMark + width));
    const inside = await client.call('private/buy', {
      instrumentName: spread,
      quantity: '10',
      price: String(spreadMark + width),
    });
    assert.equal(inside.order.orderState, 'open');
  });
});
