/**
 * Account settings methods: `private/set_self_trading_config` (Deribit's name), the self-trade
 * prevention mode of one account, through the core's `set_account_settings` command.
 *
 * - Self-trade prevention is per account in the engine (src/engine/matching.ts): an order meets
 *   an order of the same account. Orders of two accounts of one user trade with each other, as
 *   orders of two users do; no mode changes that.
 * - `mode`: `cancel_maker` (every account's default) cancels the resting order of the account and
 *   matching goes on; `reject_taker` refuses the incoming order with `order_overlap` (10003) when
 *   nothing has filled yet, and otherwise cancels its rest (docs/decisions.md, "Self-trade
 *   prevention").
 * - The account: `accountId` when given (one of the key's user's accounts, else
 *   `account_not_owned`), the key's default account otherwise.
 * - `extendedToSubaccounts`: on Deribit, true also prevents trades between the user's accounts.
 *   The engine cannot, so only false (or absent) is taken; true is refused naming the field
 *   rather than answered `ok` for a protection that would not exist.
 * - Answered `ok` once the setting is journaled (durable), as every core command is.
 */
import { Type } from '@sinclair/typebox';
import { VenueError } from '../../domain/errors.ts';
import type { CommandPort } from '../ports.ts';
import type { CallContext, MethodRegistry } from '../registry.ts';
import { Opt, Strict, StringEnum } from '../validation.ts';
import { principalOf, submitOrThrow } from './context.ts';

export const SELF_TRADE_MODES = ['reject_taker', 'cancel_maker'] as const;

export const SetSelfTradingConfigParams = Type.Object(
  {
    mode: StringEnum(SELF_TRADE_MODES, {
      description:
        'reject_taker: an incoming order that would trade with a resting order of the same account is refused (order_overlap) or, once partly filled, its rest cancelled; cancel_maker (the default of every account): the resting order is cancelled and matching goes on',
    }),
    extendedToSubaccounts: Opt(
      Type.Boolean({
        description:
          'only false: self-trade prevention is per account, so orders of two accounts of one user still trade with each other; true is refused',
      }),
    ),
    accountId: Opt(
      Type.Integer({
        minimum: 1,
        description: "one of the key's user's accounts; the key's default account when absent",
      }),
    ),
  },
  Strict,
);

export interface AccountSettingsDeps {
  readonly commands: CommandPort;
}

/** `accountId` when given (owned by the key's user), else the key's default account. */
function targetAccount(context: CallContext, accountId: number | null | undefined): number {
  const principal = principalOf(context);
  if (accountId == null) return principal.defaultAccountId;
  if (!principal.accountIds.has(accountId)) {
    throw new VenueError('account_not_owned', `accountId ${accountId} does not belong to this key`, {
      field: 'accountId',
    });
  }
  return accountId;
}

export function registerAccountSettingsMethods(registry: MethodRegistry, deps: AccountSettingsDeps): void {
  registry.register({
    name: 'private/set_self_trading_config',
    summary:
      "Sets the self-trade prevention mode (reject_taker or cancel_maker) of the key's default account, or of accountId; answered once durable.",
    access: 'private',
    // It changes what the account's orders do when they meet its own: a trade control.
    roles: ['trade'],
    params: SetSelfTradingConfigParams,
    result: Type.Literal('ok'),
    handler: async (params, context) => {
      const accountId = targetAccount(context, params.accountId);
      if (params.extendedToSubaccounts === true) {
        throw new VenueError(
          'invalid_params',
          'extendedToSubaccounts true is not supported: self-trade prevention is per account, and orders of two accounts of one user trade with each other',
          { field: 'extendedToSubaccounts' },
        );
      }
      await submitOrThrow(deps.commands, {
        type: 'set_account_settings',
        accountId,
        selfTradeMode: params.mode,
      });
      return 'ok' as const;
    },
  });
}
