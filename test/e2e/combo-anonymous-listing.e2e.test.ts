/**
 * Only a signed call lists a combo on first use (src/api/methods/context.ts, instrumentOrCombo):
 * an anonymous book or ticker read of a combo not listed yet is refused and lists nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import { callSpread } from '../support/combo-picks.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

describe('combo listing on first use needs a signed call', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('anonymous ticker and book reads of an unlisted combo are refused and list nothing', async () => {
    const signed = running.http(0);
    const anonymous = new HttpClient({ baseUrl: running.baseUrl });
    const { combo } = await callSpread(signed);
    const listed = async () =>
      (await anonymous.call('public/get_instruments', { currency: 'BTC', kind: 'option_combo' })).some(
        (instrument) => instrument.instrumentName === combo,
      );
    assert.equal(await listed(), false, 'not listed yet');
    for (const method of ['public/ticker', 'public/get_order_book'] as const) {
      await assert.rejects(anonymous.call(method, { instrumentName: combo }), (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.errorName, 'invalid_instrument', error.message);
        return true;
      });
    }
    assert.equal(await listed(), false, 'an anonymous read lists nothing');
    // A signed read lists it.
    const ticker = await signed.call('public/ticker', { instrumentName: combo });
    assert.equal(ticker.instrumentName, combo);
    assert.equal(await listed(), true);
  });
});
