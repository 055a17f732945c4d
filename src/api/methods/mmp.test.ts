import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand, UnstampedCommand } from '../../core/commands.ts';
import { Instrument } from '../../domain/instrument.ts';
import { optionSpec, perpetualSpec, T0 } from '../../engine/testkit.ts';
import { Venue } from '../../engine/venue.ts';
import type { Principal } from '../auth/authenticator.ts';
import { type CallContext, MethodRegistry } from '../registry.ts';
import { registerMmpMethods } from './mmp.ts';
import { toEditOrder, toPlaceOrder } from './order-params.ts';

function setup() {
  const venue = Venue.create();
  let seq = 0;
  const stamp = (command: UnstampedCommand) => ({ ...command, seq: ++seq, ts: T0 }) as CoreCommand;
  venue.execute(stamp({ type: 'create_account', accountId: 7 }));
  venue.execute(stamp({ type: 'list_instrument', spec: perpetualSpec() }));
  const registry = new MethodRegistry();
  registerMmpMethods(registry, {
    commands: { submit: async (command) => venue.execute(stamp(command)), now: () => T0 },
    mmpConfig: (accountId, indexName) => venue.mmpConfig(accountId, indexName),
  });
  const principal = {
    defaultAccountId: 7,
    accountIds: new Set([7]),
    roles: new Set(['trade']),
  } as unknown as Principal;
  const context: CallContext = { principal, transport: 'http', session: null, receivedAt: T0 };
  const call = async (name: string, params: Record<string, unknown>) => {
    const method = registry.get(name)!;
    method.validate(params); // throws a VenueError on bad params
    return method.handler(params as never, context);
  };
  return { venue, call };
}

describe('MMP methods', () => {
  test('set, get and reset round-trip through the engine', async () => {
    const { venue, call } = setup();
    const set = await call('private/set_mmp_config', {
      indexName: 'btc_usd',
      interval: 60,
      frozenTime: 10,
      quantityLimit: '25.5',
      deltaLimit: '3',
    });
    assert.deepEqual(set, [
      {
        indexName: 'btc_usd',
        interval: 60,
        frozenTime: 10,
        quantityLimit: '25.5',
        deltaLimit: '3',
        quantity: '0',
        delta: '0',
        vega: '0',
      },
    ]);
    assert.equal(venue.mmpConfig(7)[0]!.quantityLimit, 25.5);
    assert.deepEqual(await call('private/get_mmp_config', {}), set);
    assert.equal(await call('private/reset_mmp', { indexName: 'btc_usd' }), 'ok');
    await call('private/set_mmp_config', { indexName: 'btc_usd', interval: 0, frozenTime: 0 });
    assert.deepEqual(await call('private/get_mmp_config', { indexName: 'btc_usd' }), []);
  });

  test('refusals surface as VenueErrors with the field', async () => {
    const { call } = setup();
    await assert.rejects(
      call('private/set_mmp_config', { indexName: 'btc_usd', interval: 5, frozenTime: 0 }),
      {
        name: 'VenueError',
      },
    );
    await assert.rejects(
      call('private/reset_mmp', { indexName: 'eth_usd' }),
      (error: Error & { data?: unknown }) => /MMP/.test(error.message),
    );
  });
});

describe('advanced order params', () => {
  const option = new Instrument(0, optionSpec());
  test('sell/edit with advanced carry the USD / IV value, not a tick price', () => {
    const place = toPlaceOrder(
      { instrumentName: option.name, quantity: '1', price: '62.5', advanced: 'implv' } as never,
      'buy',
      1,
      option,
    );
    assert.equal(place.advanced, 'implv');
    assert.equal(place.advancedValue, 62.5);
    assert.equal(place.price, null);
    const edit = toEditOrder(
      { orderId: 'BTC-1', quantity: '1', price: '2500', advanced: 'usd' } as never,
      1,
      option,
    );
    assert.equal(edit.advanced, 'usd');
    assert.equal(edit.advancedValue, 2500);
    assert.equal(edit.price, undefined);
    assert.throws(
      () =>
        toPlaceOrder(
          { instrumentName: option.name, quantity: '1', price: '-1', advanced: 'usd' } as never,
          'buy',
          1,
          option,
        ),
      { name: 'VenueError' },
    );
  });
});
