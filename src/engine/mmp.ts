/**
 * Market maker protection: per account and index (`btc_usd`…) a group with limits on the
 * traded quantity, delta and vega of its MMP orders' fills over a rolling interval.
 *
 * Invariants:
 * - Only fills of orders with `mmp` count. Quantity is direction-agnostic (Σ|quantity| in the
 *   instrument's quantity units); delta and vega are |Σ signed| (buy +, sell −). Option delta and
 *   vega come from the greeks published with mark prices (per unit of quantity); a future or
 *   spot fill counts its coin amount as delta (inverse: USD quantity / index).
 * - A breach (a sum above its limit) freezes the group: every open MMP order of the account on
 *   that currency is cancelled (`mmp_trigger`, `mmpCancelled`), new MMP orders are refused with
 *   `mmp_trigger` until `frozenTime` s have passed (0: until `reset_mmp`). Reset also empties
 *   the window.
 * - An order may carry `mmp` only while its account has a config for the index (`mmp_required`).
 * - Sums are recomputed from the window each time; everything is snapshotted. The quantity sum
 *   is exact: each fill keeps its lots and its instrument's amount step, the sum is a decimal
 *   (bigint units at the finest step's scale), and it is compared with the limit's decimal (the
 *   shortest one the double prints as), so 0.2 + 0.1 BTC is 0.3, at a limit of 0.3 and not above
 *   it. A fill saved by an earlier build holds a float `quantity` instead; it is read as its
 *   shortest decimal and left as saved, so an older snapshot restores to its hash. Delta and vega
 *   stay float sums (they are products of floats: greeks, index).
 */
import type { ResetMmp, SetMmpConfig } from '../core/commands.ts';
import type { CommandResult, CoreError, CoreEvent, TradeParty, TradeView } from '../core/events.ts';
import { formatScaled, parseDecimal, type ScaledDecimal } from '../domain/decimal.ts';
import { cancelResting } from './matching.ts';
import { FLAG_MMP, FLAG_MMP_CANCELLED, type Order } from './order.ts';
import { refusal, type VenueState } from './state.ts';

export const MAX_MMP_SECONDS = 3600;

export interface MmpConfig {
  readonly indexName: string;
  /** Seconds; the rolling window. */
  readonly interval: number;
  /** Seconds frozen after a breach; 0 = until reset. */
  readonly frozenTime: number;
  readonly quantityLimit: number;
  readonly deltaLimit: number | null;
  readonly vegaLimit: number | null;
}

export interface MmpFill {
  readonly ts: number;
  /** |amount| in lots of `step`: the fill's quantity is exactly lots × step. */
  readonly lots?: number;
  /** The instrument's amount step (`minTradeAmount`, e.g. "0.1") when the fill was counted. */
  readonly step?: string;
  /**
   * Fills saved by an earlier build: the quantity as a float (`amountGrid.toNumber`), instead of
   * `lots` and `step`. Read as the shortest decimal it prints as; never written any more.
   */
  readonly quantity?: number;
  readonly delta: number;
  readonly vega: number;
}

export interface MmpGroup {
  readonly accountId: number;
  config: MmpConfig;
  window: MmpFill[];
  /** null: not frozen; 0: frozen until reset; else frozen until this ms. */
  frozenUntil: number | null;
}

export interface MmpStatus extends MmpConfig {
  readonly frozenUntil: number | null;
  /** Σ quantity of the window, as an exact plain decimal ("0.3"). */
  readonly quantity: string;
  readonly delta: number;
  readonly vega: number;
}

export function indexNameOf(currency: string): string {
  return `${currency.toLowerCase()}_usd`;
}

/** Whether some listed instrument's currency has this index: a config for any other protects nothing. */
function indexListed(state: VenueState, indexName: string): boolean {
  return state.instrumentList.some((entry) => indexNameOf(entry.instrument.currency) === indexName);
}

function key(accountId: number, indexName: string): string {
  return `${accountId}:${indexName}`;
}

function fail(state: VenueState, command: SetMmpConfig | ResetMmp, error: CoreError): CommandResult {
  state.events.push({ type: 'rejection', commandType: command.type, accountId: command.accountId, error });
  return { ok: false, error, events: state.events };
}

export function setMmpConfig(state: VenueState, command: SetMmpConfig): CommandResult {
  if (!state.accounts.has(command.accountId))
    return fail(state, command, refusal('account_not_found', 'account not found', { field: 'accountId' }));
  const seconds = (v: number, field: string) =>
    Number.isSafeInteger(v) && v >= 0 && v <= MAX_MMP_SECONDS
      ? null
      : refusal('invalid_params', `${field} must be 0…${MAX_MMP_SECONDS} seconds`, { field });
  const error =
    seconds(command.interval, 'interval') ??
    seconds(command.frozenTime, 'frozenTime') ??
    (!indexListed(state, command.indexName)
      ? refusal('invalid_params', `no listed instrument follows the index ${command.indexName}`, {
          field: 'indexName',
        })
      : null) ??
    (!(command.quantityLimit > 0) && command.interval !== 0
      ? refusal('invalid_params', 'quantityLimit must be positive', { field: 'quantityLimit' })
      : null) ??
    (command.deltaLimit != null && !(command.deltaLimit > 0)
      ? refusal('invalid_params', 'deltaLimit must be positive', { field: 'deltaLimit' })
      : null) ??
    (command.vegaLimit != null && !(command.vegaLimit > 0)
      ? refusal('invalid_params', 'vegaLimit must be positive', { field: 'vegaLimit' })
      : null);
  if (error !== null) return fail(state, command, error);
  const k = key(command.accountId, command.indexName);
  if (command.interval === 0) {
    state.advanced.mmp.delete(k);
  } else {
    const config: MmpConfig = {
      indexName: command.indexName,
      interval: command.interval,
      frozenTime: command.frozenTime,
      quantityLimit: command.quantityLimit,
      deltaLimit: command.deltaLimit ?? null,
      vegaLimit: command.vegaLimit ?? null,
    };
    const group = state.advanced.mmp.get(k);
    if (group === undefined)
      state.advanced.mmp.set(k, { accountId: command.accountId, config, window: [], frozenUntil: null });
    else group.config = config;
  }
  state.events.push({ type: 'account', accountId: command.accountId, change: 'settings' });
  return { ok: true, events: state.events };
}

export function resetMmp(state: VenueState, command: ResetMmp): CommandResult {
  const group = state.advanced.mmp.get(key(command.accountId, command.indexName));
  if (group === undefined)
    return fail(state, command, refusal('not_found', 'no MMP config for that index', { field: 'indexName' }));
  group.frozenUntil = null;
  group.window = [];
  state.events.push({ type: 'account', accountId: command.accountId, change: 'settings' });
  return { ok: true, events: state.events };
}

function frozen(group: MmpGroup, now: number): boolean {
  // Pure (queries call it too): an elapsed freeze simply stops counting as frozen.
  return group.frozenUntil !== null && (group.frozenUntil === 0 || now < group.frozenUntil);
}

/**
 * Refusal for an order sent with `mmp: true` (placed, or edited to it): `mmp_required` when the
 * account has no MMP config for the currency's index (Deribit 13040, "not a MMP user"; the flag
 * would protect nothing), `mmp_trigger` while the group is frozen; else null.
 */
export function mmpRefusal(state: VenueState, accountId: number, currency: string): CoreError | null {
  const indexName = indexNameOf(currency);
  const group = state.advanced.mmp.get(key(accountId, indexName));
  if (group === undefined)
    return refusal('mmp_required', `market maker protection is not configured for ${indexName}`, {
      field: 'mmp',
      indexName,
    });
  if (!frozen(group, state.now)) return null;
  return refusal('mmp_trigger', 'market maker protection is frozen', {
    field: 'mmp',
    frozenUntil: group.frozenUntil,
  });
}

/** Parsed amount steps (a venue lists a handful of distinct ones). */
const STEPS = new Map<string, ScaledDecimal>();

function stepOf(text: string): ScaledDecimal {
  let step = STEPS.get(text);
  if (step === undefined) {
    step = parseDecimal(text, 'step');
    STEPS.set(text, step);
  }
  return step;
}

const NUMBER_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/**
 * The decimal a non-negative finite double prints as (its shortest round-trip form, exponent
 * form included), exactly: 0.3 is 3/10, not the double's binary value. null for anything else.
 */
function decimalOfNumber(value: number): ScaledDecimal | null {
  const match = NUMBER_TEXT.exec(String(value));
  if (match === null) return null;
  const [, whole = '0', fraction = '', exponent = '0'] = match;
  const scale = fraction.length - Number(exponent);
  const units = BigInt(whole + fraction);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/** a − b as a sign (−1, 0, 1), exactly. */
function compareDecimals(a: ScaledDecimal, b: ScaledDecimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.units * 10n ** BigInt(scale - a.scale);
  const y = b.units * 10n ** BigInt(scale - b.scale);
  return x > y ? 1 : x < y ? -1 : 0;
}

/**
 * Σ quantity of the window, exactly. Lots are summed per step as integers (a window rarely holds
 * more than two steps), then the per-step totals are added as bigints at the finest scale.
 */
function quantitySum(window: readonly MmpFill[]): ScaledDecimal {
  const steps: string[] = [];
  const lots: number[] = [];
  let exact = true;
  for (const f of window) {
    const step = f.step ?? legacyStep(f.quantity ?? 0);
    let i = steps.indexOf(step);
    if (i < 0) i = steps.push(step) - 1;
    lots[i] = (lots[i] ?? 0) + (f.lots ?? 1);
    if (!Number.isSafeInteger(lots[i])) exact = false;
  }
  if (!exact) return quantitySumBig(window);
  let scale = 0;
  for (const step of steps) scale = Math.max(scale, stepOf(step).scale);
  let units = 0n;
  steps.forEach((text, i) => {
    const step = stepOf(text);
    units += BigInt(lots[i]!) * step.units * 10n ** BigInt(scale - step.scale);
  });
  return { units, scale };
}

/** `quantitySum` all in bigints: for lot totals beyond 2^53. */
function quantitySumBig(window: readonly MmpFill[]): ScaledDecimal {
  let scale = 0;
  for (const f of window) scale = Math.max(scale, stepOf(f.step ?? legacyStep(f.quantity ?? 0)).scale);
  let units = 0n;
  for (const f of window) {
    const step = stepOf(f.step ?? legacyStep(f.quantity ?? 0));
    units += BigInt(f.lots ?? 1) * step.units * 10n ** BigInt(scale - step.scale);
  }
  return { units, scale };
}

/** A fill saved with a float quantity counts as one lot of the decimal it prints as. */
function legacyStep(quantity: number): string {
  const exact = decimalOfNumber(quantity);
  return exact === null ? '0' : formatScaled(exact.units, exact.scale);
}

function sums(window: readonly MmpFill[]): { quantity: ScaledDecimal; delta: number; vega: number } {
  let delta = 0;
  let vega = 0;
  for (const f of window) {
    delta += f.delta;
    vega += f.vega;
  }
  return { quantity: quantitySum(window), delta: Math.abs(delta), vega: Math.abs(vega) };
}

/** Fills at or before this instant are outside the group's interval. */
function windowStart(group: MmpGroup, now: number): number {
  return now - group.config.interval * 1000;
}

/** Whether the window's quantity is above the limit (an infinite limit never is). */
function quantityBreached(quantity: ScaledDecimal, limit: number): boolean {
  const exact = decimalOfNumber(limit);
  return exact !== null && compareDecimals(quantity, exact) > 0;
}

export function mmpStatus(state: VenueState, accountId: number): MmpStatus[] {
  const out: MmpStatus[] = [];
  for (const group of state.advanced.mmp.values()) {
    if (group.accountId !== accountId) continue;
    // The window is trimmed only when the next MMP fill comes: a read leaves it as it is.
    const since = windowStart(group, state.now);
    const s = sums(group.window.filter((f) => f.ts > since));
    out.push({
      ...group.config,
      frozenUntil: frozen(group, state.now) ? group.frozenUntil : null,
      quantity: formatScaled(s.quantity.units, s.quantity.scale),
      delta: s.delta,
      vega: s.vega,
    });
  }
  return out.sort((a, b) => (a.indexName < b.indexName ? -1 : a.indexName > b.indexName ? 1 : 0));
}

/** Counts the MMP fills among trade events in events[from…]; triggers breached groups. */
export function reactMmp(state: VenueState, events: readonly CoreEvent[], from: number): boolean {
  let changed = false;
  const end = events.length;
  for (let i = from; i < end; i++) {
    const e = events[i]!;
    if (e.type !== 'trade' || e.trade.blockTradeId !== null) continue;
    const trade = e.trade;
    for (const party of [trade.taker, trade.maker]) {
      if (!party.mmp) continue;
      const group = state.advanced.mmp.get(key(party.accountId, indexNameOf(trade.currency)));
      if (group === undefined || frozen(group, state.now)) continue;
      const amountGrid = state.instruments.get(trade.instrumentName)!.instrument.amountGrid;
      const { delta, vega } = exposure(state, trade, party);
      group.window.push({ ts: state.now, lots: Math.abs(trade.amount), step: amountGrid.step, delta, vega });
      const since = windowStart(group, state.now);
      while (group.window.length > 0 && group.window[0]!.ts <= since) group.window.shift();
      const s = sums(group.window);
      const c = group.config;
      const breached =
        quantityBreached(s.quantity, c.quantityLimit) ||
        (c.deltaLimit !== null && s.delta > c.deltaLimit) ||
        (c.vegaLimit !== null && s.vega > c.vegaLimit);
      if (breached) {
        trigger(state, group, trade.currency);
        changed = true;
      }
    }
  }
  return changed;
}

/**
 * The delta (coins) and vega a party's side of a trade adds. A combo trade adds its leg trades'
 * (the party's own side of each): a combo has no greeks of its own, and its legs are what the
 * account now holds.
 */
function exposure(state: VenueState, trade: TradeView, party: TradeParty): { delta: number; vega: number } {
  if (trade.legs !== undefined) {
    let delta = 0;
    let vega = 0;
    for (const leg of trade.legs) {
      const own = party.liquidity === 'T' ? leg.taker : leg.maker;
      const part = exposure(state, leg, own);
      delta += part.delta;
      vega += part.vega;
    }
    return { delta, vega };
  }
  const instrument = state.instruments.get(trade.instrumentName)!;
  const quantity = instrument.instrument.amountGrid.toNumber(trade.amount);
  const sign = party.side === 'buy' ? 1 : -1;
  if (instrument.economics.isOption) {
    const greeks = state.advanced.greeks.get(trade.instrumentName);
    return { delta: sign * quantity * (greeks?.delta ?? 0), vega: sign * quantity * (greeks?.vega ?? 0) };
  }
  if (instrument.instrument.spec.marginKind === 'inverse') {
    const index = state.indexPrice(instrument.instrument.currency);
    return { delta: index === null || index <= 0 ? 0 : (sign * quantity) / index, vega: 0 };
  }
  return { delta: sign * quantity, vega: 0 };
}

function trigger(state: VenueState, group: MmpGroup, currency: string): void {
  group.frozenUntil = group.config.frozenTime === 0 ? 0 : state.now + group.config.frozenTime * 1000;
  group.window = [];
  state.events.push({
    type: 'mmp_trigger',
    accountId: group.accountId,
    indexName: group.config.indexName,
    frozenUntil: group.frozenUntil,
  });
  const account = state.accounts.get(group.accountId)!;
  const victims: Order[] = [];
  for (const order of account.openOrders) {
    if ((order.flags & FLAG_MMP) !== 0 && order.currency === currency) victims.push(order);
  }
  victims.sort((a, b) => a.number - b.number);
  for (const order of victims) {
    order.flags |= FLAG_MMP_CANCELLED;
    cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'mmp_trigger');
  }
}
