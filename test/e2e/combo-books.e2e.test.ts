/**
 * Deribit's combo-book methods through the whole service: private/create_combo finds and lists
 * the combo two leg trades describe; public/get_combo_ids, get_combos and get_combo_details read
 * it, inactive once its earliest leg has expired (see docs/decisions.md, "Combo books").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Combo } from '../../sdk/types.ts';
import { callSpread } from '../support/combo-picks.ts';
import { refusalParts as refusal } from '../support/refusal.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

const legsOf = (combo: Combo) => combo.legs.map((leg) => [leg.instrumentName, leg.amount]);

describe('combo books: create_combo, get_combo_ids, get_combos, get_combo_details', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('create_combo lists the spread its legs describe, in either order; the reads then show it', async () => {
    const client = running.http(0);
    const { combo, long, short } = await callSpread(client);
    const idsBefore = await client.call('public/get_combo_ids', { currency: 'BTC' });
    assert.equal(idsBefore.includes(combo), false, 'not listed yet');

    const created = await client.call('private/create_combo', {
      trades: [
        { instrumentName: short, direction: 'sell', amount: '1' },
        { instrumentName: long, direction: 'buy', amount: '1.0' },
      ],
    });
    assert.equal(created.id, combo);
    assert.equal(created.state, 'active');
    assert.deepEqual(legsOf(created), [
      [long, 1],
      [short, -1],
    ]);
    assert.equal(created.creationTimestamp, running.clock.now());
    assert.equal(created.stateTimestamp, created.creationTimestamp);

    // Creating it again answers the same combo: nothing is listed twice.
    const again = await client.call('private/create_combo', {
      trades: [
        { instrumentName: long, direction: 'buy' },
        { instrumentName: short, direction: 'sell' },
      ],
    });
    assert.deepEqual(again, created);
    assert.deepEqual(await client.call('public/get_combo_details', { comboId: combo }), created);
    const anonymous = new HttpClient({ baseUrl: running.baseUrl });
    assert.deepEqual(await anonymous.call('public/get_combo_details', { comboId: combo }), created);
    assert.deepEqual(
      (await anonymous.call('public/get_combo_ids', { currency: 'BTC' })).filter((id) => id === combo),
      [combo],
    );
    assert.deepEqual(
      (await anonymous.call('public/get_combos', { currency: 'any' })).filter((c) => c.id === combo),
      [created],
    );
    assert.deepEqual(await anonymous.call('public/get_combo_ids', { currency: 'ETH' }), []);
    const listed = await anonymous.call('public/get_instruments', { currency: 'BTC', kind: 'option_combo' });
    assert.ok(listed.some((instrument) => instrument.instrumentName === combo));
  });

  test("legs that are a combo's opposite give that combo; the bought leg names a spread", async () => {
    const client = running.http(0);
    const { long, short } = await callSpread(client);
    const [, expiry, lowStrike] = long.split('-');
    const highStrike = short.split('-')[2];
    // Buying the higher strike and selling the lower is the other call spread, not this one sold.
    const bear = await client.call('private/create_combo', {
      trades: [
        { instrumentName: long, direction: 'sell' },
        { instrumentName: short, direction: 'buy' },
      ],
    });
    assert.equal(bear.id, `BTC-CS-${expiry}-${highStrike}_${lowStrike}`);
    // A straddle's legs both sold are the straddle (sold).
    const put = `BTC-${expiry}-${lowStrike}-P`;
    const straddle = await client.call('private/create_combo', {
      trades: [
        { instrumentName: put, direction: 'sell' },
        { instrumentName: long, direction: 'sell' },
      ],
    });
    assert.equal(straddle.id, `BTC-STRD-${expiry}-${lowStrike}`);
    assert.deepEqual(legsOf(straddle), [
      [long, 1],
      [put, 1],
    ]);
    // The perpetual bought against a dated future sold is the future spread sold.
    const future = (await client.call('public/get_instruments', { currency: 'BTC', kind: 'future' })).find(
      (instrument) => instrument.expiration !== null && instrument.marginKind === 'reversed',
    )!;
    const spread = await client.call('private/create_combo', {
      trades: [
        { instrumentName: 'BTC-PERPETUAL', direction: 'buy', amount: '10' },
        { instrumentName: future.instrumentName, direction: 'sell', amount: '10' },
      ],
    });
    assert.equal(spread.id, `BTC-FS-${future.instrumentName.split('-')[1]}_PERP`);
    assert.deepEqual(legsOf(spread), [
      [future.instrumentName, 1],
      ['BTC-PERPETUAL', -1],
    ]);
  });

  test('legs that form no combo are refused naming the field; so is a read of no combo', async () => {
    const client = running.http(0);
    const { long, short } = await callSpread(client);
    const cases: Array<[unknown[], string]> = [
      [[{ instrumentName: long, direction: 'buy' }], 'trades'],
      [
        [
          { instrumentName: long, direction: 'buy', amount: '1' },
          { instrumentName: short, direction: 'sell', amount: '2' },
        ],
        'trades[1].amount',
      ],
      [
        [
          { instrumentName: long, direction: 'buy' },
          { instrumentName: short, direction: 'buy' },
        ],
        'trades',
      ],
      [
        [
          { instrumentName: 'BTC-NOPE', direction: 'buy' },
          { instrumentName: short, direction: 'sell' },
        ],
        'trades[0].instrumentName',
      ],
      [
        [
          { instrumentName: long, direction: 'buy' },
          { instrumentName: 'ETH-PERPETUAL', direction: 'sell' },
        ],
        'trades',
      ],
    ];
    for (const [trades, field] of cases) {
      const refused = await refusal(client.call('private/create_combo', { trades } as never));
      assert.equal(refused.name, 'invalid_params', refused.message);
      assert.equal(refused.field, field, refused.message);
    }
    const notCombo = await refusal(client.call('public/get_combo_details', { comboId: 'BTC-PERPETUAL' }));
    assert.deepEqual([notCombo.name, notCombo.field], ['invalid_instrument', 'comboId']);
    const unsigned = new HttpClient({ baseUrl: running.baseUrl });
    // The straddle at the higher strike (the test above listed the one at the lower).
    const straddle = `BTC-STRD-${short.split('-')[1]}-${short.split('-')[2]}`;
    const unlisted = await refusal(unsigned.call('public/get_combo_details', { comboId: straddle }));
    assert.equal(unlisted.name, 'invalid_instrument', 'an anonymous read lists no combo');
    const noLegs = await refusal(
      client.call('public/get_combo_details', { comboId: `BTC-STRD-${short.split('-')[1]}-1` }),
    );
    assert.deepEqual([noLegs.name, noLegs.field], ['invalid_instrument', 'comboId'], noLegs.message);
    const bad = await refusal(client.call('public/get_combo_ids', { currency: 'XYZ' }));
    assert.deepEqual([bad.name, bad.field], ['invalid_params', 'currency']);
  });

  test('a combo whose earliest leg expired is inactive, and listed as such', async () => {
    const client = running.http(0);
    const { combo } = await callSpread(client);
    const created = await client.call('public/get_combo_details', { comboId: combo });
    const expiry = (await client.call('public/get_instrument', { instrumentName: combo })).expiration!;
    running.clock.set(expiry + 60_000);
    await running.service.market.tick();
    await running.service.market.idle();
    const expired = await client.call('public/get_combo_details', { comboId: combo });
    assert.equal(expired.state, 'inactive');
    assert.equal(expired.stateTimestamp, expiry);
    assert.equal(expired.creationTimestamp, created.creationTimestamp);
    assert.ok(
      (await client.call('public/get_combo_ids', { currency: 'BTC', state: 'inactive' })).includes(combo),
    );
    assert.ok((await client.call('public/get_combo_ids', { currency: 'BTC' })).includes(combo));
    assert.equal(
      (await client.call('public/get_combo_ids', { currency: 'BTC', state: 'active' })).includes(combo),
      false,
    );
    assert.equal(
      (await client.call('public/get_combos', { currency: 'BTC' })).some((c) => c.id === combo),
      false,
    );
    // Its legs have expired: there is no combo of them to create, listed or not.
    const legs = expired.legs.map((leg) => ({
      instrumentName: leg.instrumentName,
      direction: leg.amount > 0 ? ('buy' as const) : ('sell' as const),
    }));
    const put = legs[0]!.instrumentName.replace(/-C$/, '-P');
    for (const trades of [legs, [legs[0]!, { instrumentName: put, direction: 'buy' as const }]]) {
      const refused = await refusal(client.call('private/create_combo', { trades }));
      assert.deepEqual(
        [refused.name, refused.field],
        ['instrument_expired', 'trades[0].instrumentName'],
        refused.message,
      );
    }
  });
});
