/**
 * Property tests of the portfolio body validator (validate.ts) and of the flat routes' own body
 * checks (routes.ts: cancel, cancel-all, info):
 * - any JSON value, any body shaped like the schema with junk in its fields, and any valid body
 *   with one field mutated is either accepted or refused with a VenueError of the catalogue (never
 *   a 5xx-class name, never another exception) whose `data.field` names a path of the input: one
 *   present in it, or a missing one its parent requires (`value_required`);
 * - a refusal after a one-field mutation names that field, a field near it, or one of the
 *   cross-field rules the mutated field takes part in;
 * - valid BALANCE, TWAP, COMMON and ICEBERG bodies are accepted, keep their legs, quantities
 *   (exact decimals), prices as sent and blocks, and are accepted by the submit schema too
 *   (schemas.ts: "every value these schemas describe is one the handlers accept" is read here the
 *   other way: what the handler accepts in the schema's own types, the schema describes).
 *
 * Runs: PORTFOLIO_PROPERTY_RUNS (default 100, scaled per property); PORTFOLIO_PROPERTY_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { PortfolioSpec } from '../../algo/types.ts';
import { longerThan } from '../../core/types.ts';
import { ERROR_CATALOGUE, VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import type { Principal } from '../auth/authenticator.ts';
import type { FlatRouteDefinition } from '../http-routes.ts';
import { compileValidator } from '../validation.ts';
import { type PortfolioRouteDeps, registerPortfolioRoutes } from './routes.ts';
import { SubmitPortfolioBody } from './schemas.ts';
import {
  allowedPriceIn,
  CUSTOMIZED_NOTE_MAX,
  MAX_BALANCE_PARTS,
  MAX_PRICE_SNAPSHOT,
  MIN_DYNAMIC_MS,
  PORTFOLIO_HORIZON_MS,
  POSITION_SIDES,
  STRATEGY_MAX,
  TIME_IN_FORCE,
  TRADE_MODES,
  validatePortfolioBody,
} from './validate.ts';
import { ACCOUNTS, context, instruments, NOW } from './validate-testkit.ts';

const RUNS = Number(process.env.PORTFOLIO_PROPERTY_RUNS ?? 100);
const SEED = process.env.PORTFOLIO_PROPERTY_SEED ? Number(process.env.PORTFOLIO_PROPERTY_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

type InstrumentType = 'OPTION' | 'PERPETUAL' | 'DELIVERY_FUTURES' | 'SPOT';
interface Listed {
  readonly name: string;
  readonly type: InstrumentType;
}
const LISTED: readonly Listed[] = [
  { name: 'BTC-PERPETUAL', type: 'PERPETUAL' },
  { name: 'BTC-27DEC26-70000-C', type: 'OPTION' },
  { name: 'ETH-PERPETUAL', type: 'PERPETUAL' },
  { name: 'BTC-27DEC26', type: 'DELIVERY_FUTURES' },
  { name: 'BTC_USDC', type: 'SPOT' },
];
/** Every BTC-based instrument: their legs share forCcy BTC (a TWAP's legs must share one). */
const BTC_LISTED = LISTED.filter((l) => instruments.get(l.name)!.spec.baseCurrency === 'BTC');

const PORTFOLIO_TYPES = ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'] as const;
type PortfolioType = (typeof PORTFOLIO_TYPES)[number];

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Refusal invariants

/** Error names a client's input must never produce: the 5xx-class and "we failed" ones. */
const SERVER_SIDE = new Set(['internal_error', 'unavailable', 'error']);

type Segment = string | number;

/** `legs[1].priceOptions.price` → ['legs', 1, 'priceOptions', 'price']; null when not a path. */
function segmentsOf(path: string): Segment[] | null {
  const out: Segment[] = [];
  for (const part of path.split('.')) {
    const match = /^([A-Za-z][A-Za-z0-9]*)((?:\[\d+\])*)$/.exec(part);
    if (match === null) return null;
    out.push(match[1]!);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(index[1]));
  }
  return out;
}

function child(container: unknown, segment: Segment): { container: boolean; value: unknown } {
  if (typeof segment === 'number') {
    return Array.isArray(container)
      ? { container: true, value: container[segment] }
      : { container: false, value: undefined };
  }
  if (typeof container !== 'object' || container === null || Array.isArray(container)) {
    return { container: false, value: undefined };
  }
  return {
    container: true,
    value: Object.hasOwn(container, segment) ? (container as Json)[segment] : undefined,
  };
}

/** Where `path` lands in `input`: whether its parent is there (an object or array) and the value. */
function locate(input: unknown, path: Segment[]): { parentThere: boolean; value: unknown } {
  let here: unknown = input;
  for (let i = 0; i < path.length; i++) {
    const step = child(here, path[i]!);
    if (!step.container) return { parentThere: false, value: undefined };
    if (i === path.length - 1) return { parentThere: true, value: step.value };
    here = step.value;
  }
  return { parentThere: true, value: input };
}

const isMissing = (value: unknown) => value === null || value === undefined;
/** Missing for `value_required`: absent, null, or (the routes' ids, as in a query string) ''. */
const isMissingOrBlank = (value: unknown) => isMissing(value) || value === '';

/**
 * Runs `check` on `input`: it either returns, or throws a catalogue VenueError whose field is a
 * path of the input (present; or missing, under a present parent, for `value_required`; `body`
 * when the body is no object). Returns the refusal, or null when accepted.
 */
function refusalOf(input: unknown, check: () => unknown, messageNamesField = true): VenueError | null {
  try {
    check();
    return null;
  } catch (error) {
    if (!(error instanceof VenueError)) {
      assert.fail(`not a VenueError: ${String(error)} for ${JSON.stringify(input)}`);
    }
    const what = `${error.errorName} ${JSON.stringify(error.data)} "${error.message}" for ${JSON.stringify(input)}`;
    assert.ok(error.errorName in ERROR_CATALOGUE, what);
    assert.ok(error.httpStatus < 500 && !SERVER_SIDE.has(error.errorName), `server-side error: ${what}`);
    const field = error.data?.field;
    assert.equal(typeof field, 'string', `no data.field: ${what}`);
    if (field === 'body') {
      assert.ok(
        typeof input !== 'object' || input === null || Array.isArray(input),
        `'body' named for an object body: ${what}`,
      );
      return error;
    }
    const path = segmentsOf(field as string);
    assert.ok(path !== null, `data.field is not a path: ${what}`);
    const at = locate(input, path);
    assert.ok(at.parentThere, `data.field's parent is not in the input: ${what}`);
    if (error.errorName === 'value_required') {
      assert.ok(isMissingOrBlank(at.value), `value_required for a present value: ${what}`);
    }
    if (error.errorName === 'invalid_params') {
      // A wrong value that was sent: a named field null is "not sent", an array's null item is sent.
      const sent = typeof path.at(-1) === 'number' ? at.value !== undefined : !isMissing(at.value);
      assert.ok(sent, `invalid_params for a value not sent: ${what}`);
    }
    if (messageNamesField) {
      assert.ok(error.message.includes(String(path[0])), `the message does not name the field: ${what}`);
    }
    return error;
  }
}

// ---------------------------------------------------------------------------------------------
// Valid bodies

/** A decimal with `whole` and `fraction` digits, as text ("0" fraction digits: an integer). */
function decimal(whole: number, fraction: string): string {
  const trimmed = fraction.replace(/0+$/, '');
  return trimmed === '' ? String(whole) : `${whole}.${trimmed}`;
}

const digits = (max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: max }).map((ds) => ds.join(''));

/** A price valid in `unit` (null: the quote currency), as canonical decimal text of at most 13 digits. */
function priceText(unit: string | null): fc.Arbitrary<string> {
  const iv = unit === 'IV';
  return fc
    .tuple(fc.integer({ min: 0, max: iv ? 999 : 999_999_999 }), digits(iv ? 2 : 4))
    .map(([whole, fraction]) => decimal(whole, fraction))
    .filter((text) => Number(text) > 0);
}

/** The forms a decimal may travel in: `as` 'string' or 'number' for BALANCE and TWAP prices. */
function dressed(text: string, as: 'string' | 'number' | 'either'): fc.Arbitrary<string | number> {
  const sign = text.startsWith('-') ? '-' : '';
  const magnitude = text.slice(sign.length);
  const strings = fc.constantFrom(
    text,
    text.includes('.') ? `${text}00` : `${text}.0`,
    `${sign}0${magnitude}`,
  );
  if (as === 'string') return strings;
  const number = fc.constant(Number(text));
  return as === 'number' ? number : fc.oneof(strings, number);
}

function randomCase(text: string): fc.Arbitrary<string> {
  return fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
}

/** An optional field: omitted, null, or the value. */
function optional<T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> {
  return fc.oneof(fc.constant(undefined), fc.constant(null), value);
}

function legCurrencies(instrument: Instrument): string[] {
  const s = instrument.spec;
  return [...new Set([s.baseCurrency, s.quoteCurrency, s.settlementCurrency])];
}

/** What the generator meant, to compare the accepted spec with. */
interface LegIntent {
  readonly quantityText: string;
  readonly forCcy: string;
}

interface ValidBody {
  readonly type: PortfolioType;
  readonly body: Json;
  readonly legs: readonly LegIntent[];
  readonly iceberg: { display: string; refresh: string | null } | null;
}

function strip(record: Json): Json {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

function pricingArb(type: PortfolioType, instrument: Instrument): fc.Arbitrary<Json> {
  const as = type === 'BALANCE' ? 'string' : type === 'TWAP' ? 'number' : 'either';
  const needsUnit = type === 'BALANCE' || type === 'TWAP';
  const units = allowedPriceIn(instrument);
  const unitArb = fc.constantFrom(...units).chain((u) => randomCase(u).map((sent) => ({ u, sent })));
  const priced = (unit: { u: string; sent: string } | null, priceRequired: boolean) =>
    (priceRequired
      ? priceText(unit?.u ?? null).map((t) => t as string | null)
      : fc.option(priceText(unit?.u ?? null))
    ).chain((text) => (text === null ? optional(fc.constant(null)) : dressed(text, as)));
  const unitOrNone = needsUnit ? unitArb : fc.option(unitArb);
  return fc.constantFrom('LIMIT', 'MARKET', 'DYNAMIC').chain((priceType) => {
    if (priceType === 'MARKET') {
      return fc
        .option(unitArb)
        .chain((unit) =>
          fc
            .record({ price: priced(unit, false), priceIn: fc.constant(unit?.sent) })
            .map((r) => strip({ priceType, ...r, priceIn: r.priceIn ?? null })),
        );
    }
    const priceRequired = priceType === 'LIMIT' || needsUnit;
    return unitOrNone.chain((unit) =>
      fc
        .record({
          price: priced(unit, priceRequired),
          dynamic:
            priceType === 'DYNAMIC'
              ? fc.record({
                  dynamicPriceStrategy: fc.constantFrom('MID', 'MARK', 'MODEL', 'BID', 'ASK'),
                  dynamicPriceOffset: optional(
                    fc
                      .tuple(fc.boolean(), fc.integer({ min: 0, max: 99_999 }), digits(4))
                      .chain(([negative, whole, fraction]) => {
                        const text = decimal(whole, fraction);
                        return dressed(negative && text !== '0' ? `-${text}` : text, 'either');
                      }),
                  ),
                  dynamicMs:
                    type === 'TWAP'
                      ? fc.integer({ min: MIN_DYNAMIC_MS, max: PORTFOLIO_HORIZON_MS })
                      : optional(fc.integer({ min: MIN_DYNAMIC_MS, max: PORTFOLIO_HORIZON_MS })),
                })
              : fc.constant({}),
        })
        .map(({ price, dynamic }) =>
          strip({ priceType, price, ...(unit === null ? {} : { priceIn: unit.sent }), ...dynamic }),
        ),
    );
  });
}

function snapshotArb(instrument: Instrument): fc.Arbitrary<Json[]> {
  const unit = fc.constantFrom(...allowedPriceIn(instrument));
  const entry = fc.tuple(unit, unit).chain(([placeIn, priceIn]) =>
    fc.record({
      placePriceIn: randomCase(placeIn),
      placePrice: priceText(placeIn).map(Number),
      priceIn: randomCase(priceIn),
      price: priceText(priceIn).map(Number),
    }),
  );
  return fc.array(entry, { maxLength: 3 });
}

function legArb(
  type: PortfolioType,
  listed: Listed,
  forCcyChoice: 'any' | 'BTC',
): fc.Arbitrary<{ leg: Json; intent: LegIntent }> {
  const instrument = instruments.get(listed.name)!;
  const currencies = forCcyChoice === 'BTC' ? ['BTC'] : legCurrencies(instrument);
  const quantity = fc
    .integer({ min: 1, max: 2_000_000 })
    .map((lots) => instrument.formatQuantity(lots))
    .chain((text) => dressed(text, 'either').map((sent) => ({ text, sent })));
  const forCcy = fc.oneof(
    fc.constant({ intent: instrument.spec.baseCurrency, sent: undefined as string | null | undefined }),
    fc.constantFrom(...currencies).chain((c) => randomCase(c).map((sent) => ({ intent: c, sent }))),
  );
  const canReduce = instrument.kind !== 'spot' && instrument.spec.legs === null;
  return fc
    .record({
      quantity,
      forCcy,
      side: fc.constantFrom(1, 2),
      priceOptions: pricingArb(type, instrument),
      priceSnapshot: optional(snapshotArb(instrument)),
      timeInForce: optional(fc.constantFrom(1, 2, 3, 4)),
      postOnly: optional(fc.boolean()),
      reduceOnly: canReduce ? optional(fc.boolean()) : optional(fc.constant(false)),
      hidden: optional(fc.boolean()),
      tradeMode: optional(fc.constantFrom(1, 2, 3)),
      positionSide: optional(fc.constantFrom(1, 2, 3)),
      hedge: optional(fc.boolean()),
    })
    .map((r) => ({
      leg: strip({
        instrument: listed.name,
        instrumentType: listed.type,
        side: r.side,
        quantity: r.quantity.sent,
        priceOptions: r.priceOptions,
        priceSnapshot: r.priceSnapshot,
        timeInForce: r.timeInForce,
        postOnly: r.postOnly,
        reduceOnly: r.reduceOnly,
        hidden: r.hidden,
        tradeMode: r.tradeMode,
        positionSide: r.positionSide,
        hedge: r.hedge,
        forCcy: r.forCcy.sent,
      }),
      intent: { quantityText: r.quantity.text, forCcy: r.forCcy.intent },
    }));
}

/** The hedge flag validate.ts resolves: asked for, or a non-option leg of a mixed portfolio. */
/** The hedge flags a body's legs resolve to: as sent, and a mixed BALANCE's non-option legs. */
function resolvedHedges(legs: readonly Json[], type: PortfolioType): boolean[] {
  const options = legs.map((l) => instruments.get(l.instrument as string)!.isOption);
  const mixed = type === 'BALANCE' && options.includes(true) && options.includes(false);
  return legs.map((l, i) => l.hedge === true || (mixed && !options[i]));
}

/** Free text as validate.ts keeps it: any code points but control characters (plainText). */
const textUpTo = (max: number) =>
  fc.string({ unit: 'binary', maxLength: max }).filter((text) => ![...text].some(isControl));
const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;

function validBodyArb(type: PortfolioType): fc.Arbitrary<ValidBody> {
  const legsArb =
    type === 'ICEBERG'
      ? fc.constantFrom(...LISTED).chain((l) => legArb(type, l, 'any').map((x) => [x]))
      : type === 'TWAP'
        ? fc.oneof(
            fc.constantFrom(...LISTED).chain((l) => legArb(type, l, 'any').map((x) => [x])),
            fc.array(
              fc.constantFrom(...BTC_LISTED).chain((l) => legArb(type, l, 'BTC')),
              { minLength: 1, maxLength: 4 },
            ),
          )
        : fc.array(
            fc.constantFrom(...LISTED).chain((l) => legArb(type, l, 'any')),
            { minLength: 1, maxLength: 4 },
          );
  return fc
    .record({
      accountId: fc.constantFrom(...ACCOUNTS),
      mirrors: fc.shuffledSubarray([...ACCOUNTS]),
      strategy: optional(textUpTo(STRATEGY_MAX)),
      customizedNote: optional(textUpTo(CUSTOMIZED_NOTE_MAX)),
      legs: legsArb,
      priority: fc.option(fc.nat()),
      balance: fc.record({
        parts: fc.integer({ min: 1, max: MAX_BALANCE_PARTS }),
        eachLimitMs: fc.integer({ min: 1, max: PORTFOLIO_HORIZON_MS }),
        totalLimitMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: PORTFOLIO_HORIZON_MS })),
        totalEndAction: fc.constantFrom(1, 2),
      }),
      twap: fc.record({
        startTimestamp: optional(fc.integer({ min: NOW - 15_000, max: NOW + PORTFOLIO_HORIZON_MS })),
        durationSec: fc.integer({ min: 1, max: PORTFOLIO_HORIZON_MS / 1000 }),
        frequencySec: fc.integer({ min: 1, max: PORTFOLIO_HORIZON_MS / 1000 }),
      }),
      iceberg: fc.record({
        display: fc.integer({ min: 1, max: 1000 }),
        refresh: fc.option(fc.integer({ min: 1, max: 1000 })),
        displayForm: fc.boolean(),
      }),
    })
    .map((r) => {
      const legs = r.legs.map((x) => ({ ...x.leg }));
      const hedges = resolvedHedges(legs, type);
      for (const leg of legs) delete leg.priority;
      if (type === 'BALANCE' && r.priority !== null) {
        const candidates = legs.flatMap((_, i) => (hedges[i] ? [] : [i]));
        if (candidates.length > 0) legs[candidates[r.priority % candidates.length]!]!.priority = true;
      }
      const body: Json = strip({
        accountId: r.accountId,
        portfolioType: type,
        strategy: r.strategy,
        customizedNote: r.customizedNote,
        legs,
        sendToDummyAccountIds: r.mirrors.filter((id) => id !== r.accountId),
      });
      let iceberg: ValidBody['iceberg'] = null;
      switch (type) {
        case 'BALANCE': {
          const lots = legs.map((l) =>
            instruments.get(l.instrument as string)!.parseQuantity(String(l.quantity)),
          );
          const anyMain = hedges.includes(false);
          const limit = Math.min(...lots.filter((_, i) => !anyMain || !hedges[i]));
          const parts = Math.min(r.balance.parts, limit);
          const eachLimitMs =
            r.balance.totalLimitMs === 0
              ? Math.min(r.balance.eachLimitMs, Math.floor(PORTFOLIO_HORIZON_MS / parts))
              : r.balance.eachLimitMs;
          body.balanceTrade = { ...r.balance, parts, eachLimitMs };
          break;
        }
        case 'TWAP': {
          const frequencySec = Math.max(r.twap.frequencySec, Math.ceil(r.twap.durationSec / 10_000));
          body.twapTrade = strip({ ...r.twap, frequencySec });
          break;
        }
        case 'ICEBERG': {
          const instrument = instruments.get(legs[0]!.instrument as string)!;
          // At most the leg's quantity (validate.ts refuses a display that hides nothing).
          const legLots = instrument.parseQuantity(String(legs[0]!.quantity));
          const display = instrument.formatQuantity(Math.min(r.iceberg.display, legLots));
          const refresh = r.iceberg.refresh === null ? null : instrument.formatQuantity(r.iceberg.refresh);
          iceberg = { display, refresh };
          body.icebergTrade = strip({
            displayQuantity: r.iceberg.displayForm ? display : Number(display),
            refreshQuantity: refresh ?? undefined,
          });
          break;
        }
        case 'COMMON':
          break;
      }
      return { type, body, legs: r.legs.map((x) => x.intent), iceberg };
    })
    .filter((valid) => !(valid.body.legs as Json[]).some(subTickBuy));
}

/** A buy leg priced in its quote currency below one tick: refused (validate.ts `buyableAt`). */
function subTickBuy(leg: Json): boolean {
  const instrument = instruments.get(leg.instrument as string)!;
  const options = leg.priceOptions as Json;
  if (leg.side !== 1 || options.priceType === 'MARKET' || options.price == null) return false;
  const unit = (options.priceIn as string | null | undefined) ?? instrument.spec.quoteCurrency;
  if (unit.toUpperCase() !== instrument.spec.quoteCurrency.toUpperCase()) return false;
  return Number(options.price) < Number(instrument.spec.tickSize);
}

const anyValidBody = fc.oneof(...PORTFOLIO_TYPES.map(validBodyArb));

// ---------------------------------------------------------------------------------------------
// Mutations of one field

/** Every path in a body: containers, leaves, and a few optional fields it left out. */
function pathsOf(value: unknown, prefix: Segment[] = []): Segment[][] {
  const out: Segment[][] = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push(...pathsOf(item, [...prefix, i]));
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) out.push(...pathsOf(item, [...prefix, key]));
  }
  return out;
}

const OMITTED_OPTIONALS = [
  ['strategy'],
  ['customizedNote'],
  ['sendToDummyAccountIds'],
  ['legs', 0, 'forCcy'],
  ['legs', 0, 'timeInForce'],
  ['legs', 0, 'priceSnapshot'],
  ['legs', 0, 'priority'],
  ['legs', 0, 'reduceOnly'],
  ['legs', 0, 'priceOptions', 'dynamicMs'],
  ['legs', 0, 'priceOptions', 'dynamicPriceStrategy'],
  ['balanceTrade'],
  ['twapTrade'],
  ['icebergTrade'],
] as const satisfies readonly Segment[][];

type Mutation =
  | { readonly kind: 'delete' }
  | { readonly kind: 'set'; readonly value: unknown }
  | { readonly kind: 'near'; readonly pick: number };

/** Values one step away from `v`: the other JSON type, case, sign, bounds, a blank. */
function nearMisses(v: unknown): unknown[] {
  const out: unknown[] = [null, '', [], {}, true, 0, -1, 1.5, 2 ** 53, 1e21, 1e-7];
  if (typeof v === 'number') out.push(String(v), -v, v * 10, v + 0.5, v * 1e9, -0);
  if (typeof v === 'string') {
    out.push(
      v.toLowerCase(),
      v.toUpperCase(),
      ` ${v}`,
      `${v} `,
      `${v}x`,
      Number(v),
      `-${v}`,
      `${v}.`,
      `${v}e0`,
    );
  }
  if (typeof v === 'boolean') out.push(!v, String(v), v ? 1 : 0);
  if (Array.isArray(v)) out.push([...v, ...v], v.slice(1), ...(v.length > 0 ? [[v[0], v[0]]] : []));
  return out;
}

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: 'delete' as const }),
  fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'set' as const, value })),
  fc.nat().map((pick) => ({ kind: 'near' as const, pick })),
  fc.nat().map((pick) => ({ kind: 'near' as const, pick })),
);

function mutate(body: Json, path: Segment[], mutation: Mutation): Json {
  const copy = structuredClone(body);
  let parent: unknown = copy;
  for (const segment of path.slice(0, -1)) {
    parent = (parent as Record<Segment, unknown>)?.[segment];
    if (typeof parent !== 'object' || parent === null) return copy;
  }
  const last = path[path.length - 1]!;
  const container = parent as Record<Segment, unknown>;
  switch (mutation.kind) {
    case 'delete':
      if (Array.isArray(container) && typeof last === 'number') container.splice(last, 1);
      else delete container[last];
      break;
    case 'set':
      container[last] = mutation.value;
      break;
    case 'near': {
      const options = nearMisses(container[last]);
      container[last] = options[mutation.pick % options.length];
      break;
    }
  }
  // As it travels: through JSON (-0 is 0, 1e21 stays a number).
  return JSON.parse(JSON.stringify(copy)) as Json;
}

const isPrefix = (a: readonly Segment[], b: readonly Segment[]) => a.every((s, i) => b[i] === s);

/** The unit of a path: a leg (`legs`, i), else its top-level field. */
function unitOf(path: readonly Segment[]): string {
  return path[0] === 'legs' && typeof path[1] === 'number' ? `legs[${path[1]}]` : String(path[0]);
}

/**
 * Whether a refusal naming `field` may follow from mutating `mutated`: the same field, one
 * enclosing or inside it, the same leg or block, or a rule across fields the mutated one joins.
 */
function nearby(mutated: readonly Segment[], field: readonly Segment[]): boolean {
  if (isPrefix(mutated, field) || isPrefix(field, mutated)) return true;
  if (unitOf(mutated) === unitOf(field)) return true;
  // The type decides which block is required and how prices are written: anything may follow.
  if (mutated[0] === 'portfolioType') return true;
  const f = field.join('.');
  if (mutated[0] === 'legs') {
    // A leg's lots bound the parts; its instrument and hedge flag decide which legs are hedges
    // (and so which may be the priority leg); a TWAP's legs share one forCcy; an ICEBERG has one
    // leg, whose grid its quantities are on.
    if (f === 'balanceTrade.parts' || /^legs\.\d+\.(priority|forCcy)$/.test(f) || field[0] === 'icebergTrade')
      return true;
    if (f === 'legs') return true;
  }
  // A mirror equal to the main account is "repeated".
  if (mutated[0] === 'accountId' && field[0] === 'sendToDummyAccountIds') return true;
  // Without a totalLimitMs, parts × eachLimitMs is bounded (named at eachLimitMs).
  if (mutated[0] === 'balanceTrade' && field[0] === 'balanceTrade') return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Junk shaped like the schema

const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(
    '',
    ' ',
    '1',
    '-1',
    '0',
    '1e3',
    'NaN',
    '0x10',
    'usd',
    'IV',
    'LIMIT',
    'BTC',
    '99999999999999999999.9',
  ),
  fc.constantFrom(0, -1, 1, 2, 3, 4, 5, 1.5, 2 ** 53, -0, 1e21, 1e-7),
);
const orJunk = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: junk });

const shapedLeg = fc.record(
  {
    instrument: orJunk(fc.constantFrom(...LISTED.map((l) => l.name))),
    instrumentType: orJunk(fc.constantFrom('OPTION', 'PERPETUAL', 'DELIVERY_FUTURES', 'SPOT')),
    side: orJunk(fc.constantFrom(1, 2)),
    quantity: orJunk(fc.constantFrom('10', '100', 1.5, '0.1', '0.0001', 20)),
    priceOptions: orJunk(
      fc.record(
        {
          priceType: orJunk(fc.constantFrom('LIMIT', 'MARKET', 'DYNAMIC')),
          price: orJunk(fc.constantFrom('60000', 60000, '55', 55, '0.05')),
          priceIn: orJunk(fc.constantFrom('USD', 'iv', 'BTC', 'ETH', 'USDC')),
          dynamicPriceStrategy: orJunk(fc.constantFrom('MID', 'MARK', 'BID')),
          dynamicPriceOffset: orJunk(fc.constantFrom('1', -1, '0.5')),
          dynamicMs: orJunk(fc.constantFrom(100, 1000, 99)),
        },
        { requiredKeys: [] },
      ),
    ),
    priceSnapshot: orJunk(
      fc.array(
        fc.record(
          {
            placePriceIn: orJunk(fc.constantFrom('USD', 'BTC', 'iv')),
            placePrice: orJunk(fc.constantFrom(1, 55, 60000)),
            priceIn: orJunk(fc.constantFrom('USD', 'BTC', 'iv')),
            price: orJunk(fc.constantFrom(1, 55, 60000)),
          },
          { requiredKeys: [] },
        ),
        { maxLength: MAX_PRICE_SNAPSHOT + 1 },
      ),
    ),
    timeInForce: orJunk(fc.constantFrom(1, 2, 3, 4)),
    postOnly: orJunk(fc.boolean()),
    reduceOnly: orJunk(fc.boolean()),
    hidden: orJunk(fc.boolean()),
    tradeMode: orJunk(fc.constantFrom(1, 2, 3)),
    positionSide: orJunk(fc.constantFrom(1, 2, 3)),
    hedge: orJunk(fc.boolean()),
    priority: orJunk(fc.boolean()),
    forCcy: orJunk(fc.constantFrom('BTC', 'usd', 'ETH', 'USDC')),
  },
  { requiredKeys: [] },
);

const shapedBody = fc.record(
  {
    accountId: orJunk(fc.constantFrom(7, 8, 9, 10, '7')),
    portfolioType: orJunk(fc.constantFrom(...PORTFOLIO_TYPES)),
    strategy: orJunk(fc.string({ maxLength: 70 })),
    customizedNote: orJunk(fc.string({ maxLength: 110 })),
    legs: orJunk(fc.array(shapedLeg, { maxLength: 3 })),
    balanceTrade: orJunk(
      fc.record(
        {
          parts: orJunk(fc.integer({ min: 0, max: 1001 })),
          eachLimitMs: orJunk(fc.integer({ min: 0, max: 2 * PORTFOLIO_HORIZON_MS })),
          totalLimitMs: orJunk(fc.integer({ min: 0, max: 2 * PORTFOLIO_HORIZON_MS })),
          totalEndAction: orJunk(fc.constantFrom(1, 2)),
        },
        { requiredKeys: [] },
      ),
    ),
    twapTrade: orJunk(
      fc.record(
        {
          startTimestamp: orJunk(fc.integer({ min: NOW - 60_000, max: NOW + 2 * PORTFOLIO_HORIZON_MS })),
          durationSec: orJunk(fc.integer({ min: 0, max: 4_000_000 })),
          frequencySec: orJunk(fc.integer({ min: 0, max: 4_000_000 })),
        },
        { requiredKeys: [] },
      ),
    ),
    icebergTrade: orJunk(
      fc.record(
        {
          displayQuantity: orJunk(fc.constantFrom('10', 20, '0.1')),
          refreshQuantity: orJunk(fc.constantFrom('10', 5)),
        },
        { requiredKeys: [] },
      ),
    ),
    sendToDummyAccountIds: orJunk(fc.array(orJunk(fc.constantFrom(7, 8, 9)), { maxLength: 3 })),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------------------------

const validate = (body: unknown) => () => validatePortfolioBody(body, context);
const schemaCheck = compileValidator(SubmitPortfolioBody, 'body');

describe('validatePortfolioBody: properties', () => {
  test('any JSON value: accepted, or a catalogue refusal naming a field of the input', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        refusalOf(value, validate(value));
      }),
      runs,
    );
  });

  test('bodies shaped like the schema with junk in their fields: the same', () => {
    fc.assert(
      fc.property(shapedBody, (body) => {
        refusalOf(body, validate(body));
      }),
      { ...runs, numRuns: RUNS * 3 },
    );
  });

  test('valid bodies are accepted and keep their legs, quantities, prices and blocks', () => {
    fc.assert(
      fc.property(anyValidBody, (valid) => {
        const { body } = valid;
        let spec: PortfolioSpec;
        try {
          spec = validatePortfolioBody(body, context);
        } catch (error) {
          assert.fail(
            `refused ${JSON.stringify(body)}: ${String(error)} ${JSON.stringify((error as VenueError).data)}`,
          );
        }
        checkPreserved(valid, spec);
      }),
      { ...runs, numRuns: RUNS * 2 },
    );
  });

  test('valid bodies are described by the submit schema (the OpenAPI document)', () => {
    fc.assert(
      fc.property(anyValidBody, ({ body }) => {
        try {
          schemaCheck(body);
        } catch (error) {
          assert.fail(`schema refuses an accepted body: ${(error as Error).message} ${JSON.stringify(body)}`);
        }
      }),
      runs,
    );
  });

  test('free text (strategy, customizedNote): the validator accepts exactly what the submit schema accepts', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 110 }),
      fc.string({ maxLength: 8 }).map((t) => `${t}\u0000`),
      fc.constantFrom(
        '\t',
        '\n',
        '\u007f',
        '\u0085',
        '\u2028',
        'x'.repeat(65),
        '😀'.repeat(64),
        '😀'.repeat(65),
      ),
    );
    fc.assert(
      fc.property(
        anyValidBody,
        fc.constantFrom('strategy', 'customizedNote'),
        text,
        ({ body }, field, value) => {
          const sent = { ...body, [field]: value };
          let schemaSays = true;
          try {
            schemaCheck(sent);
          } catch {
            schemaSays = false;
          }
          const refusal = refusalOf(sent, validate(sent));
          assert.equal(
            refusal === null,
            schemaSays,
            `${field} ${JSON.stringify(value)}: schema ${schemaSays ? 'accepts' : 'refuses'}, validator ${refusal === null ? 'accepts' : `refuses (${refusal.message})`}`,
          );
        },
      ),
      runs,
    );
  });

  test('a valid body with one field mutated: accepted, or refused naming that field or one its rules join', () => {
    fc.assert(
      fc.property(anyValidBody, fc.nat(), mutationArb, ({ body }, pick, mutation) => {
        const paths = [...pathsOf(body), ...OMITTED_OPTIONALS.map((p) => [...p])];
        const path = paths[pick % paths.length]!;
        const mutated = mutate(body, path, mutation);
        const refusal = refusalOf(mutated, validate(mutated));
        if (refusal === null) return;
        const field = segmentsOf(refusal.data!.field as string) ?? [];
        assert.ok(
          nearby(path, field),
          `mutating ${path.join('.')} was refused at ${refusal.data!.field} (${refusal.errorName}: ${refusal.message}) for ${JSON.stringify(mutated)}`,
        );
      }),
      { ...runs, numRuns: RUNS * 4 },
    );
  });
});

function checkPreserved(valid: ValidBody, spec: PortfolioSpec): void {
  const body = valid.body as Json & { legs: Json[] };
  assert.equal(spec.portfolioType, valid.type);
  assert.equal(spec.accountId, body.accountId);
  assert.equal(spec.strategy, body.strategy ?? null);
  assert.equal(spec.customizedNote, body.customizedNote ?? null);
  assert.deepEqual(spec.mirrorAccountIds, body.sendToDummyAccountIds ?? []);
  assert.equal(spec.legs.length, body.legs.length);
  const hedges = resolvedHedges(body.legs, spec.portfolioType);
  spec.legs.forEach((leg, i) => {
    const sent = body.legs[i]!;
    const intent = valid.legs[i]!;
    const instrument = instruments.get(sent.instrument as string)!;
    assert.equal(leg.instrumentName, sent.instrument);
    assert.equal(leg.instrumentType, sent.instrumentType);
    assert.equal(leg.side, sent.side === 1 ? 'buy' : 'sell');
    assert.equal(
      instrument.formatQuantity(leg.amount),
      intent.quantityText,
      `legs[${i}].quantity ${sent.quantity}`,
    );
    assert.equal(leg.forCcy, intent.forCcy);
    assert.equal(leg.hedge, hedges[i]);
    assert.equal(leg.priority, sent.priority === true);
    assert.equal(leg.reduceOnly, sent.reduceOnly === true);
    assert.equal(leg.postOnly, sent.postOnly === true);
    assert.equal(leg.hidden, sent.hidden === true);
    assert.equal(
      leg.timeInForce,
      sent.timeInForce == null ? null : TIME_IN_FORCE[sent.timeInForce as number],
    );
    assert.equal(leg.tradeMode, sent.tradeMode == null ? null : TRADE_MODES[sent.tradeMode as number]);
    assert.equal(
      leg.positionSide,
      sent.positionSide == null ? null : POSITION_SIDES[sent.positionSide as number],
    );
    const options = sent.priceOptions as Json;
    const pricing = leg.pricing;
    assert.equal(pricing.priceType, options.priceType);
    assert.equal(pricing.priceAsSent, options.price ?? null, 'the price is kept as sent');
    assert.equal(pricing.price, options.price == null ? null : Number(options.price));
    assert.equal(pricing.priceIn, options.priceIn == null ? null : (options.priceIn as string).toUpperCase());
    if (options.priceType === 'DYNAMIC') {
      assert.equal(pricing.dynamicStrategy, options.dynamicPriceStrategy);
      assert.equal(
        pricing.dynamicOffset,
        options.dynamicPriceOffset == null ? 0 : Number(options.dynamicPriceOffset),
      );
      assert.equal(pricing.dynamicOffsetAsSent ?? null, options.dynamicPriceOffset ?? null);
      assert.equal(pricing.dynamicMs, options.dynamicMs ?? null);
    }
    const snapshot = (sent.priceSnapshot as Json[] | null | undefined) ?? [];
    assert.deepEqual(
      leg.priceSnapshot,
      snapshot.map((e) => ({
        placePriceIn: (e.placePriceIn as string).toUpperCase(),
        placePrice: e.placePrice,
        price: e.price,
        priceIn: (e.priceIn as string).toUpperCase(),
      })),
    );
  });
  if (valid.type === 'BALANCE') {
    const b = body.balanceTrade as Json;
    assert.deepEqual(spec.balance, {
      parts: b.parts,
      eachLimitMs: b.eachLimitMs,
      totalLimitMs: b.totalLimitMs,
      totalEndAction: b.totalEndAction === 1 ? 'CANCEL_REMAINING' : 'FILL_BY_MARKET',
    });
  } else assert.equal(spec.balance, null);
  if (valid.type === 'TWAP') {
    const t = body.twapTrade as Json;
    assert.deepEqual(spec.twap, {
      startTimestamp: t.startTimestamp ?? null,
      durationMs: (t.durationSec as number) * 1000,
      frequencyMs: (t.frequencySec as number) * 1000,
    });
  } else assert.equal(spec.twap, null);
  if (valid.type === 'ICEBERG') {
    const instrument = instruments.get(body.legs[0]!.instrument as string)!;
    assert.equal(instrument.formatQuantity(spec.iceberg!.displayAmount), valid.iceberg!.display);
    assert.equal(
      spec.iceberg!.refreshAmount === null ? null : instrument.formatQuantity(spec.iceberg!.refreshAmount),
      valid.iceberg!.refresh,
    );
  } else assert.equal(spec.iceberg, null);
  if (body.strategy != null) assert.ok(!longerThan(body.strategy as string, STRATEGY_MAX));
}

// ---------------------------------------------------------------------------------------------
// The flat routes' own checks (cancel, cancel-all, info)

describe('portfolio routes: body checks', () => {
  const handlers = new Map<string, FlatRouteDefinition['handler']>();
  registerPortfolioRoutes(
    {
      registerFlatRoute: (route) => {
        handlers.set(route.url.split('/').at(-1)!, route.handler as FlatRouteDefinition['handler']);
      },
    },
    {
      submitMachine: async () =>
        ({ result: { ok: true, value: { kind: 'cancelled', portfolioIds: [] } } }) as unknown as Awaited<
          ReturnType<PortfolioRouteDeps['submitMachine']>
        >,
      now: () => NOW,
      instrument: (name) => instruments.get(name),
      portfolios: () => ({ portfolio: () => undefined }),
    },
  );
  const principal = {
    apiKey: 'k',
    userId: 1,
    accountIds: new Set(ACCOUNTS),
    defaultAccountId: 7,
    roles: new Set(['trade']),
    deskName: null,
    rateLimits: null,
  } as unknown as Principal;

  async function answer(route: string, input: unknown, asQuery = false): Promise<VenueError | null> {
    const handler = handlers.get(route)!;
    let thrown: unknown = null;
    try {
      await handler({
        body: asQuery ? undefined : input,
        query: asQuery ? input : undefined,
        principal,
      } as never);
    } catch (error) {
      thrown = error;
    }
    // Not-found refusals say "portfolio 5 not found": only data.field names the field here.
    return refusalOf(
      input,
      () => {
        if (thrown !== null) throw thrown;
      },
      false,
    );
  }

  const idLike = orJunk(fc.oneof(fc.constantFrom(7, 8, 9, 10, '7', '0007', 5, '5'), fc.integer()));

  test('cancel: any body is a catalogue refusal naming one of its fields (no portfolio exists)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record({ portfolioId: idLike, accountId: idLike }, { requiredKeys: [] }),
        ),
        async (body) => {
          const refusal = await answer('cancel', body);
          assert.ok(refusal !== null, 'no portfolio exists: every cancel is refused');
        },
      ),
      runs,
    );
  });

  test('cancel-all: any body is accepted or a catalogue refusal naming one of its fields', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record(
            { accountId: idLike, portfolioType: orJunk(fc.constantFrom(...PORTFOLIO_TYPES, 'twap')) },
            { requiredKeys: [] },
          ),
        ),
        async (body) => {
          await answer('cancel-all', body);
        },
      ),
      runs,
    );
  });

  test('info: any query is a catalogue refusal naming portfolioId', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
          fc.record({ portfolioId: fc.oneof(fc.string({ maxLength: 20 }), fc.nat().map(String)) }),
        ),
        async (query) => {
          const refusal = await answer('info', query, true);
          assert.equal(refusal?.data?.field, 'portfolioId');
        },
      ),
      runs,
    );
  });
});
