import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand, UnstampedCommand } from '../../core/commands.ts';
import { Instrument } from '../../domain/instrument.ts';
import { optionSpec, orderCommand, perpetualSpec, T0 } from '../../engine/testkit.ts';
import { Venue } from '../../engine/venue.ts';
import type { Principal } from '../auth/authenticator.ts';
import { type CallContext, MethodRegistry } from '../registry.ts';
import { mmpToWire, registerMmpMethods } from './mmp.ts';
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

describe('MMP decimals on the wire', () => {
  const PLAIN = /^\d+(\.\d+)?$/;

  test('window sums are plain decimals, never in exponent notation', () => {
    // A buy and a sell of 10 USD of an inverse perpetual a tick of the index apart: the net delta
    // (coins) is a float residue, which String() writes as 1.6592072936638886e-8.
    const wire = mmpToWire({
      indexName: 'btc_usd',
      interval: 60,
      frozenTime: 0,
      quantityLimit: 100_000,
      deltaLimit: 1000,
      vegaLimit: null,
      frozenUntil: null,
      quantity: '20',
      delta: 1.6592072936638886e-8,
      vega: 2.5e-7,
    });
    assert.match(wire.delta, PLAIN);
    assert.ok(Math.abs(Number(wire.delta) - 1.6592072936638886e-8) < 1e-20);
    assert.equal(wire.vega, '0.00000025');
    assert.equal(wire.quantity, '20');
  });

  test('the window quantity is the exact sum of the fills: 0.2 + 0.1 BTC reads "0.3", within a limit of 0.3', async () => {
    const { venue, call } = setup();
    let seq = 1000;
    const run = (command: UnstampedCommand) => {
      const result = venue.execute({ ...command, seq: ++seq, ts: T0 } as CoreCommand);
      assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
    };
    run({ type: 'list_instrument', spec: optionSpec() });
    run({ type: 'create_account', accountId: 8 });
    for (const accountId of [7, 8])
      run({ type: 'deposit', accountId, currency: 'BTC', amount: 100_000_000_000 });
    await call('private/set_mmp_config', {
      indexName: 'btc_usd',
      interval: 60,
      frozenTime: 0,
      quantityLimit: '0.3',
    });
    const order = (accountId: number, side: 'buy' | 'sell', amount: number, mmp: boolean) =>
      run({
        ...orderCommand(accountId, side, amount, 500, { instrumentName: optionSpec().name }),
        ...(mmp ? { mmp: true } : {}),
      } as UnstampedCommand);
    order(7, 'sell', 10, true);
    order(8, 'buy', 2, false);
    order(8, 'buy', 1, false);
    const [status] = (await call('private/get_mmp_config', { indexName: 'btc_usd' })) as {
      quantity: string;
      quantityLimit: string;
      frozenUntil?: number;
    }[];
    // Before: "0.30000000000000004", and the group was frozen (above the limit of 0.3).
    assert.equal(status!.quantity, '0.3');
    assert.equal(status!.quantityLimit, '0.3');
    assert.equal(status!.frozenUntil, undefined);
  });

  test('limits are decimals of at most 9 integer digits and 6 decimals, echoed as sent', async () => {
    const { call } = setup();
    const refused = async (field: string, value: unknown) =>
      assert.rejects(
        call('private/set_mmp_config', {
          indexName: 'btc_usd',
          interval: 60,
          frozenTime: 0,
          quantityLimit: '10',
          [field]: value,
        }),
        (error: Error & { errorName?: string; data?: { field?: string } }) =>
          error.errorName === 'invalid_params' && error.data?.field === field,
        `${field} ${String(value)}`,
      );
    // Before: accepted, and echoed as "1e-7", "1e+308", "100000000000000000000".
    for (const value of [0.0000001, 1e308, '99999999999999999999', '1000000000', '0.0000001', 1e21])
      await refused('quantityLimit', value);
    await refused('deltaLimit', 1e-7);
    await refused('vegaLimit', '1234567890.5');
    const set = await call('private/set_mmp_config', {
      indexName: 'btc_usd',
      interval: 60,
      frozenTime: 0,
      quantityLimit: '999999999.999999',
      deltaLimit: 0.000001,
      vegaLimit: 123456789,
    });
    assert.deepEqual(
      (set as { quantityLimit: string; deltaLimit: string; vegaLimit: string }[]).map((c) => [
        c.quantityLimit,
        c.deltaLimit,
        c.vegaLimit,
      ]),
      [['999999999.999999', '0.000001', '123456789']],
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
