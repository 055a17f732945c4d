/**
 * Market maker protection methods (Deribit `private/set_mmp_config`, `private/get_mmp_config`,
 * `private/reset_mmp`), acting on the key's default account.
 *
 * - Limits are decimal strings or numbers on the wire, of at most 9 integer digits and 6 decimals
 *   (so they print back as sent); `interval`/`frozenTime` are whole seconds (0…3600). `interval` 0
 *   removes the config. `frozenTime` 0 means frozen until reset.
 * - Every decimal of a result (limits, window sums) is a plain decimal string, never exponent form.
 * - `indexName` is `btc_usd`, `eth_usd`…; get_mmp_config without it returns every index.
 * - Results: a config/status object per index with the current window sums and `frozenUntil`
 *   (ms, 0 = until reset, absent when not frozen).
 */
import { Type } from '@sinclair/typebox';
import { VenueError } from '../../domain/errors.ts';
import { indexNameOf, type MmpStatus } from '../../engine/mmp.ts';
import { type ChannelRegistry, requirePrincipal, topicFor } from '../channels.ts';
import type { CommandPort, ReadPort } from '../ports.ts';
import type { MethodRegistry } from '../registry.ts';
import { Opt, Strict } from '../validation.ts';
import { decimalText } from '../wire/market.ts';
import { accountOf, submitOrThrow } from './context.ts';

export interface MmpDeps {
  readonly commands: CommandPort;
  /** Reads the engine's MMP status (Venue.mmpConfig). */
  readonly mmpConfig: (accountId: number, indexName: string | null) => readonly MmpStatus[];
}

const IndexName = Type.String({ pattern: '^[a-z0-9]+_[a-z0-9]+$', maxLength: 32 });
const Limit = Type.Union([Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), Type.Number({ minimum: 0 })], {
  description: 'a non-negative decimal (string or number) of at most 9 integer digits and 6 decimals',
});
const Seconds = Type.Integer({ minimum: 0, maximum: 3600 });

export const SetMmpConfigParams = Type.Object(
  {
    indexName: IndexName,
    interval: Seconds,
    frozenTime: Seconds,
    quantityLimit: Opt(Limit),
    deltaLimit: Opt(Limit),
    vegaLimit: Opt(Limit),
  },
  Strict,
);
export const GetMmpConfigParams = Type.Object({ indexName: Opt(IndexName) }, Strict);
export const ResetMmpParams = Type.Object({ indexName: IndexName }, Strict);

const MmpConfigSchema = Type.Object({
  indexName: Type.String(),
  interval: Type.Integer(),
  frozenTime: Type.Integer(),
  quantityLimit: Type.String(),
  deltaLimit: Opt(Type.String()),
  vegaLimit: Opt(Type.String()),
  frozenUntil: Opt(Type.Integer()),
  quantity: Type.String(),
  delta: Type.String(),
  vega: Type.String(),
});

/**
 * A limit's text: at most 9 integer digits and 6 decimals, 15 digits in all, which a double holds
 * exactly, so the limit prints back as the decimal that was sent. Beyond, a number such as 1e-7 or
 * 1e308 was taken and came back in exponent form ("1e-7"), and a 20-digit string came back as
 * another number.
 */
const LIMIT_TEXT = /^\d{1,9}(\.\d{1,6})?$/;

function limit(value: string | number | null | undefined, field: string): number | null {
  if (value == null) return null;
  const text = typeof value === 'number' ? String(value) : value;
  const n = Number(text);
  if (!LIMIT_TEXT.test(text) || !Number.isFinite(n) || n < 0)
    throw new VenueError(
      'invalid_params',
      `${field} must be a non-negative decimal of at most 9 integer digits and 6 decimals`,
      { field },
    );
  return n;
}

export function mmpToWire(status: MmpStatus) {
  return {
    indexName: status.indexName,
    interval: status.interval,
    frozenTime: status.frozenTime,
    quantityLimit: decimalText(status.quantityLimit),
    ...(status.deltaLimit === null ? {} : { deltaLimit: decimalText(status.deltaLimit) }),
    ...(status.vegaLimit === null ? {} : { vegaLimit: decimalText(status.vegaLimit) }),
    ...(status.frozenUntil === null ? {} : { frozenUntil: status.frozenUntil }),
    // The quantity sum is an exact decimal already. Delta and vega are float sums: a net delta or
    // vega near zero is a residue such as 1.7e-8, which String() writes in exponent form.
    quantity: status.quantity,
    delta: decimalText(status.delta),
    vega: decimalText(status.vega),
  };
}

export function registerMmpMethods(registry: MethodRegistry, deps: MmpDeps): void {
  registry.register({
    name: 'private/set_mmp_config',
    summary: 'Sets (interval 0: removes) the MMP limits of one index for the account.',
    access: 'private',
    roles: ['trade'],
    params: SetMmpConfigParams,
    result: Type.Array(MmpConfigSchema),
    handler: async (params, context) => {
      const accountId = accountOf(context);
      const quantityLimit = limit(params.quantityLimit, 'quantityLimit');
      if (params.interval !== 0 && quantityLimit === null)
        throw new VenueError('missing_params', 'quantityLimit is required', { field: 'quantityLimit' });
      await submitOrThrow(deps.commands, {
        type: 'set_mmp_config',
        accountId,
        indexName: params.indexName,
        interval: params.interval,
        frozenTime: params.frozenTime,
        quantityLimit: quantityLimit ?? 0,
        deltaLimit: limit(params.deltaLimit, 'deltaLimit'),
        vegaLimit: limit(params.vegaLimit, 'vegaLimit'),
      });
      return deps.mmpConfig(accountId, params.indexName).map(mmpToWire);
    },
  });

  registry.register({
    name: 'private/get_mmp_config',
    summary: 'MMP limits, window sums and freeze of the account (one index or all).',
    access: 'private',
    params: GetMmpConfigParams,
    result: Type.Array(MmpConfigSchema),
    handler: (params, context) => deps.mmpConfig(accountOf(context), params.indexName ?? null).map(mmpToWire),
  });

  registry.register({
    name: 'private/reset_mmp',
    summary: 'Unfreezes MMP for one index and empties its window.',
    access: 'private',
    roles: ['trade'],
    params: ResetMmpParams,
    result: Type.Literal('ok'),
    handler: async (params, context) => {
      await submitOrThrow(deps.commands, {
        type: 'reset_mmp',
        accountId: accountOf(context),
        indexName: params.indexName,
      });
      return 'ok' as const;
    },
  });
}

const MMP_TRIGGER_CHANNEL = /^user\.mmp_trigger\.([a-z0-9_]+)$/;

/**
 * `user.mmp_trigger.{index_name}` (Deribit's name): `{indexName, frozenUntil}` whenever market
 * maker protection fires for the key's default account on that index (`frozenUntil` 0 = until
 * `private/reset_mmp`). An index no listed instrument follows is refused, as set_mmp_config refuses
 * it: a maker's typo would otherwise wait for an alert that never comes.
 */
export function registerMmpChannels(channels: ChannelRegistry, reads: Pick<ReadPort, 'instruments'>): void {
  const followed = (indexName: string) =>
    reads.instruments(false).some((instrument) => indexNameOf(instrument.spec.baseCurrency) === indexName);
  channels.register({
    pattern: 'user.mmp_trigger.{index_name}',
    summary:
      'Market maker protection fired for this account: MMP orders cancelled, new ones refused until frozenUntil.',
    access: 'private',
    payload: Type.Object({ indexName: Type.String(), frozenUntil: Type.Integer() }),
    resolve(name, principal) {
      const match = MMP_TRIGGER_CHANNEL.exec(name);
      if (match === null) return null;
      const owner = requirePrincipal(principal, name);
      if (!followed(match[1]!)) {
        throw new VenueError('invalid_params', `no listed instrument follows the index in ${name}`, {
          field: 'channels',
        });
      }
      return { topics: [topicFor(name, owner.defaultAccountId)] };
    },
    produce(batch, emit) {
      for (const event of batch.events) {
        if (event.type !== 'mmp_trigger') continue;
        const data = { indexName: event.indexName, frozenUntil: event.frozenUntil };
        emit(`user.mmp_trigger.${event.indexName}`, event.accountId, () => data);
      }
    },
  });
}
