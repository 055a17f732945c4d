/** The public market-data methods over the real engine, as a client without a key sees them. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { refusal } from '../support/refusal.ts';

describe('public market data', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('get_instruments lists an instrument under its base and its quote currency', async () => {
    const client = harness.http(0);
    const names = async (currency: string) =>
      (await client.call('public/get_instruments', { currency })).map((i) => i.instrumentName);
    const usdc = await names('usdc');
    assert.ok(usdc.length > 0, 'USDC-margined instruments are listed under USDC');
    assert.ok(usdc.includes('BTC_USDC-PERPETUAL') && usdc.includes('ETH_USDC'));
    assert.ok(usdc.some((name) => /^BTC_USDC-\w+-\d+-[CP]$/.test(name)));
    assert.ok(!usdc.includes('BTC-PERPETUAL'));
    assert.deepEqual(await names('USDT'), ['BTC_USDT', 'ETH_USDT']);
    const btc = await names('BTC');
    assert.ok(
      btc.includes('BTC-PERPETUAL') && btc.includes('BTC_USDC-PERPETUAL') && !btc.includes('ETH_USDT'),
    );
    assert.equal((await names('any')).length, (await names('BTC')).length + (await names('ETH')).length);
    // Spec 2.10's words for the margin kind, as the Block RFQ instruments give it.
    const kinds = new Map(
      (await client.call('public/get_instruments', { currency: 'BTC' })).map((i) => [
        i.instrumentName,
        i.marginKind,
      ]),
    );
    assert.deepEqual([kinds.get('BTC-PERPETUAL'), kinds.get('BTC_USDC-PERPETUAL')], ['reversed', 'linear']);
  });

  test('get_instruments refuses a currency the venue does not know, naming the field', async () => {
    const error = await refusal(harness.http(0).call('public/get_instruments', { currency: 'XYZ' }));
    assert.equal(error.code, -32602);
    assert.equal((error.data as { field?: string }).field, 'currency');
    assert.match(error.message, /XYZ/);
  });

  test('get_index_price answers a currency’s USD index; another name is refused naming indexName', async () => {
    const client = harness.http(0);
    assert.deepEqual(await client.call('public/get_index_price', { indexName: 'btc_usd' }), {
      indexPrice: '60000',
      estimatedDeliveryPrice: '60000',
    });
    assert.equal((await client.call('public/get_index_price', { indexName: 'ETH_USD' })).indexPrice, '3000');
    for (const indexName of ['doge_usd', 'btc_eur']) {
      const error = await refusal(client.call('public/get_index_price', { indexName }));
      assert.equal(error.code, -32602);
      assert.equal((error.data as { field?: string }).field, 'indexName');
      assert.match(error.message, /btc_usd, eth_usd/);
    }
  });

  test('public/test names the value expectedResult takes', async () => {
    const error = await refusal(harness.http(0).call('public/test', { expectedResult: 'boom' } as never));
    assert.equal((error.data as { field?: string }).field, 'expectedResult');
    assert.match(error.message, /exception/);
  });
});
