/**
 * Maker key rotation: the desk's user creates a second key on the same desk, the old key is
 * disabled, and the new key carries on with the desk's open quotes. The fill goes to the account
 * the quote was placed for (the desk's user's), whichever of its keys placed or edited it. Another
 * user cannot take the desk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import { DeskTakenError } from '../../src/api/auth/key-store.ts';
import { registerRfqMethods } from '../../src/api/methods/rfq.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { CoreMachine } from '../../src/core/machine.ts';
import type { SubResult } from '../../src/core/submachine.ts';
import { Venue } from '../../src/engine/venue.ts';
import { buildCatalogue } from '../../src/market/catalogue.ts';
import { RfqDesk } from '../../src/rfq/desk.ts';
import { marketOf } from '../../src/rfq/market.ts';
import type { RfqEvent, RfqValue } from '../../src/rfq/types.ts';
import { startHarness } from '../support/gateway-harness.ts';
import { machinePorts } from '../support/machine-ports.ts';

const START = Date.UTC(2026, 10, 20, 12);

test('a rotated maker key keeps its desk: it sees, edits and gets filled on the old key’s quotes', async () => {
  const venue = Venue.create();
  const desk = new RfqDesk(marketOf(venue));
  const machine = new CoreMachine(venue, new Map([['rfq', desk]]));
  const clock = new VirtualClock(START);
  const { ports, submitMachine } = machinePorts(venue, machine, clock);
  for (const spec of buildCatalogue(START, { BTC: 60_000, ETH: 3_000 })) {
    assert.ok((await ports.submit({ type: 'list_instrument', spec })).ok);
  }
  const harness = await startHarness({ venue: ports });
  try {
    const keys = harness.keyStore;
    registerRfqMethods(harness.gateway.methods, {
      submit: async (command) => (await submitMachine(command)).result as SubResult<RfqValue, RfqEvent>,
      desk,
      reads: ports.reads,
      // As the service does (src/app/service.ts): the desks of enabled maker keys, once each.
      makerDesks: () =>
        [
          ...new Set(
            keys
              .listKeys()
              .filter((k) => !k.disabled && k.roles.includes('maker') && k.deskName !== null)
              .map((k) => k.deskName!),
          ),
        ].sort(),
      now: () => ports.now(),
    });
    const calls = ports.reads
      .instruments(false)
      .filter((i) => i.kind === 'option' && i.spec.baseCurrency === 'BTC' && i.spec.optionType === 'call')
      .filter((i) => i.spec.marginKind === 'inverse');
    const call = calls[calls.length - 1]!.name;
    const [takerCredential, makerCredential] = [harness.credentials[0]!, harness.credentials[1]!];
    assert.equal(makerCredential.deskName, 'MAKER1');
    const taker = harness.http(0);
    const oldKey = harness.http(1);

    const rfq = (await taker.call('block/rfqs/create_rfq', {
      legs: [{ instrumentName: call, quantity: '25', side: 'buy' }],
      makers: ['MAKER1'],
    })) as { blockRfqId: string };
    const makerRfqId = (
      (await oldKey.call('block/rfqs/get_rfqs', {})) as { results: { blockRfqId: string }[] }
    ).results[0]!.blockRfqId;
    const terms = (price: string) => ({
      executionInstruction: 'any_part_of' as const,
      side: 'sell' as const,
      quantity: '25',
      legs: [{ instrumentName: call, price, ratio: '1', side: 'buy' as const }],
    });
    const quote = (await oldKey.call('block/rfqs/create_quote', {
      blockRfqId: makerRfqId,
      ...terms('0.05'),
    })) as {
      quoteId: string;
    };

    // Rotation: a new key of the same user on the same desk, then the old one disabled.
    const rotated = keys.createApiKey(
      { userId: makerCredential.userId, roles: ['trade', 'maker'], deskName: 'MAKER1' },
      ports.now(),
    );
    assert.ok(keys.disableKey(makerCredential.apiKey));
    harness.gateway.authenticator.invalidate(makerCredential.apiKey);
    await assert.rejects(oldKey.call('block/rfqs/get_quotes', {}));
    // Another user cannot take the desk.
    assert.throws(
      () => keys.createApiKey({ userId: takerCredential.userId, roles: ['maker'], deskName: 'MAKER1' }, 0),
      DeskTakenError,
    );

    const newKey = new HttpClient({
      baseUrl: harness.baseUrl,
      credentials: { apiKey: rotated.record.apiKey, apiSecret: rotated.apiSecret },
      now: () => ports.now(),
    });
    const open = (await newKey.call('block/rfqs/get_quotes', {})) as { quoteId: string }[];
    assert.deepEqual(
      open.map((q) => q.quoteId),
      [quote.quoteId],
      'the desk’s open quote is the new key’s',
    );
    await newKey.call('block/rfqs/edit_quote', { quoteId: quote.quoteId, ...terms('0.045') });

    clock.advance(5_000);
    await ports.submit({ type: 'timer' });
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: '0.045',
    })) as { blockTrades: { quoteId: string }[] };
    assert.equal(accepted.blockTrades[0]!.quoteId, quote.quoteId);
    assert.equal(
      venue.position(makerCredential.accountIds[0]!, call)?.size,
      -250,
      'filled on the desk’s account',
    );
    assert.equal(venue.position(takerCredential.accountIds[0]!, call)?.size, 250);
  } finally {
    await harness.close();
  }
});
