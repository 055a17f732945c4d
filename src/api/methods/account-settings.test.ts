import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { CoreCommand, UnstampedCommand } from '../../core/commands.ts';
import { perpetualSpec, T0 } from '../../engine/testkit.ts';
import { Venue } from '../../engine/venue.ts';
import type { Principal } from '../auth/authenticator.ts';
import type { CommandPort, HistoryPort } from '../ports.ts';
import { type CallContext, MethodRegistry } from '../registry.ts';
import { AccountSummarySchema } from '../schemas/objects.ts';
import { createVenueReadPort } from '../venue-read-port.ts';
import { registerAccountSettingsMethods } from './account-settings.ts';
import { registerTradingMethods } from './trading.ts';

const SET = 'private/set_self_trading_config';

function setup() {
  const venue = Venue.create();
  let seq = 0;
  const stamp = (command: UnstampedCommand) => ({ ...command, seq: ++seq, ts: T0 }) as CoreCommand;
  for (const accountId of [7, 8, 9]) venue.execute(stamp({ type: 'create_account', accountId }));
  // A BTC instrument, so BTC is a currency get_account_summary takes.
  venue.execute(stamp({ type: 'list_instrument', spec: perpetualSpec() }));
  const submitted: UnstampedCommand[] = [];
  const registry = new MethodRegistry();
  const commands: CommandPort = {
    submit: async (command) => {
      submitted.push(command);
      return venue.execute(stamp(command));
    },
    now: () => T0,
  };
  registerAccountSettingsMethods(registry, { commands });
  registerTradingMethods(registry, {
    commands,
    reads: createVenueReadPort(venue),
    history: {} as HistoryPort,
  });
  // The key's user owns 7 (its default) and 8; 9 is another user's.
  const principal = {
    defaultAccountId: 7,
    accountIds: new Set([7, 8]),
    roles: new Set(['trade']),
  } as unknown as Principal;
  const context: CallContext = { principal, transport: 'http', session: null, receivedAt: T0 };
  const callMethod = async (name: string, params: Record<string, unknown>) => {
    const method = registry.get(name)!;
    method.validate(params);
    return method.handler(params as never, context);
  };
  const call = (params: Record<string, unknown>) => callMethod(SET, params);
  /** The key's default account's summary, as get_account_summary answers (and its schema checked). */
  const summary = async () => {
    const wire = await callMethod('private/get_account_summary', { currency: 'BTC' });
    assert.ok(
      Value.Check(AccountSummarySchema, wire),
      [...Value.Errors(AccountSummarySchema, wire)].map((e) => `${e.path}: ${e.message}`).join('; '),
    );
    return wire as {
      accountId: number;
      selfTradingRejectMode: string;
      selfTradingExtendedToSubaccounts: boolean;
    };
  };
  const modeOf = (accountId: number) => venue.account(accountId)!.selfTradeMode;
  return { call, summary, modeOf, submitted };
}

describe('private/set_self_trading_config', () => {
  test('sets the default account, or the owned accountId named; null means absent', async () => {
    const { call, modeOf, submitted } = setup();
    assert.equal(await call({ mode: 'reject_taker' }), 'ok');
    assert.deepEqual([modeOf(7), modeOf(8)], ['reject_taker', 'cancel_maker']);
    assert.equal(await call({ mode: 'reject_taker', accountId: 8, extendedToSubaccounts: false }), 'ok');
    assert.equal(modeOf(8), 'reject_taker');
    assert.equal(await call({ mode: 'cancel_maker', accountId: null, extendedToSubaccounts: null }), 'ok');
    assert.deepEqual([modeOf(7), modeOf(8)], ['cancel_maker', 'reject_taker']);
    assert.deepEqual(submitted, [
      { type: 'set_account_settings', accountId: 7, selfTradeMode: 'reject_taker' },
      { type: 'set_account_settings', accountId: 8, selfTradeMode: 'reject_taker' },
      { type: 'set_account_settings', accountId: 7, selfTradeMode: 'cancel_maker' },
    ]);
  });

  test("another user's account and extendedToSubaccounts true are refused, submitting nothing", async () => {
    const { call, modeOf, submitted } = setup();
    await assert.rejects(call({ mode: 'reject_taker', accountId: 9 }), {
      errorName: 'account_not_owned',
      data: { field: 'accountId' },
    });
    await assert.rejects(call({ mode: 'reject_taker', extendedToSubaccounts: true }), {
      errorName: 'invalid_params',
      data: { field: 'extendedToSubaccounts' },
    });
    assert.deepEqual(submitted, []);
    assert.equal(modeOf(9), 'cancel_maker');
    assert.equal(modeOf(7), 'cancel_maker');
  });

  test('the schema names the field at fault', async () => {
    const { call } = setup();
    for (const [params, errorName, field] of [
      [{}, 'missing_params', 'mode'],
      [{ mode: 'REJECT_TAKER' }, 'invalid_params', 'mode'],
      [{ mode: 'cancel_maker', extra: 1 }, 'invalid_params', 'extra'],
      [{ mode: 'cancel_maker', extendedToSubaccounts: 'false' }, 'invalid_params', 'extendedToSubaccounts'],
      [{ mode: 'cancel_maker', accountId: 1.5 }, 'invalid_params', 'accountId'],
    ] as const) {
      await assert.rejects(call(params), { errorName, data: { field } }, JSON.stringify(params));
    }
  });
});

describe('private/get_account_summary reads the self-trade mode back', () => {
  test("a fresh account shows cancel_maker, every account's default, not extended to subaccounts", async () => {
    const { summary } = setup();
    const wire = await summary();
    assert.equal(wire.accountId, 7);
    assert.equal(wire.selfTradingRejectMode, 'cancel_maker');
    assert.equal(wire.selfTradingExtendedToSubaccounts, false);
  });

  test('the mode set is the mode read, and setting another owned account leaves the default one', async () => {
    const { call, summary } = setup();
    await call({ mode: 'reject_taker', extendedToSubaccounts: false });
    assert.deepEqual(
      [(await summary()).selfTradingRejectMode, (await summary()).selfTradingExtendedToSubaccounts],
      ['reject_taker', false],
    );
    await call({ mode: 'cancel_maker', accountId: 8 });
    assert.equal((await summary()).selfTradingRejectMode, 'reject_taker');
    await call({ mode: 'cancel_maker' });
    assert.equal((await summary()).selfTradingRejectMode, 'cancel_maker');
  });
});
