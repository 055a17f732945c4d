/**
 * Domain → wire for portfolios: the `info` value and `trade-news` messages. Quantities and prices
 * are decimal strings (instrument grids), ids and timestamps JSON numbers, enums as the spec
 * spells them on the way in (side 1/2, totalEndAction 1/2).
 *
 * Derived figures:
 * - averagePrice = Σ(lots × ticks) / filled lots of the leg's child orders, computed exactly and
 *   printed as orders print theirs (`formatAveragePrice`), in `info` and in `ORDER_FILLED` alike;
 * - arrivalPrice = the leg's mid at start (mark when the book was one-sided or empty);
 * - slippageBps = (average − arrival) / arrival × 10,000 for a buy, the opposite for a sell
 *   (positive = worse than arrival), 2 decimals; null until something filled.
 * - parts[]: `targetQuantities` and `filledQuantities` are both cumulative per leg: the lots due
 *   by the end of the part and the lots filled by its end (by now for the current part). A TWAP
 *   slice's own lots are its target minus the previous part's filledQuantities.
 * - childOrders[]: each child's instrument and the legs it works (`legIds`; `legId` is the first):
 *   a COMMON combo child is one order on the combo for every leg, its quantity and price in the
 *   combo's units, and it is listed in each of its legs' `childOrderIds`. The legs' filled
 *   quantities and averages come from the combo's leg trades.
 * - priceOptions echo `price` and `dynamicPriceOffset` as sent (a string stays a string); every
 *   leg field of spec 2.4 is echoed (timeInForce, tradeMode, positionSide as their integer codes,
 *   null when not sent), and so is `sendToDummyAccountIds` ([] on a mirror).
 */
import { childCovers, childLegs, type PartState, type PortfolioState } from '../../algo/portfolio-state.ts';
import type { LegSpec, PortfolioEvent } from '../../algo/types.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { formatFractionalTicks } from '../wire/market.ts';
import { formatAveragePrice } from '../wire/orders.ts';
import { POSITION_SIDES, TIME_IN_FORCE, TRADE_MODES } from './validate.ts';

export type InstrumentLookup = (name: string) => Instrument | undefined;

const SIDE_CODE = { buy: 1, sell: 2 } as const;

/** Value → the spec's integer code, from validate.ts's code → value tables. */
const codesOf = <T>(table: Readonly<Record<number, T>>) =>
  new Map(Object.entries(table).map(([code, value]) => [value, Number(code)]));
const TIME_IN_FORCE_CODE = codesOf(TIME_IN_FORCE);
const TRADE_MODE_CODE = codesOf(TRADE_MODES);
const POSITION_SIDE_CODE = codesOf(POSITION_SIDES);

/** The integer code of an enum value the leg was sent with (null when it was not sent). */
function codeOf<T>(codes: ReadonlyMap<T, number>, value: T | null): number | null {
  return value === null ? null : (codes.get(value) ?? null);
}

function slippageBps(leg: LegSpec, average: number | null, arrival: number | null): number | null {
  if (average === null || arrival === null || arrival === 0) return null;
  const signed = leg.side === 'buy' ? average - arrival : arrival - average;
  return Math.round((signed / arrival) * 1e6) / 100;
}

function pricingToWire(leg: LegSpec) {
  const p = leg.pricing;
  return {
    priceType: p.priceType,
    price: p.priceAsSent === undefined ? p.price : p.priceAsSent,
    priceIn: p.priceIn,
    dynamicPriceStrategy: p.dynamicStrategy,
    // Like the other dynamic fields, null on a leg that is not DYNAMIC (an offset sent there is unused).
    dynamicPriceOffset: p.priceType === 'DYNAMIC' ? (p.dynamicOffsetAsSent ?? p.dynamicOffset) : null,
    dynamicMs: p.dynamicMs,
  };
}

/** Cumulative lots per leg due by the end of part k (a TWAP part holds its slice's own lots). */
function cumulativeTargets(portfolio: PortfolioState, k: number): number[] {
  const part = portfolio.parts[k]!;
  if (portfolio.spec.twap === null) return part.targets;
  const filledAtStart = k === 0 ? null : portfolio.parts[k - 1]!.filledAtEnd;
  return part.targets.map((lots, i) => lots + (filledAtStart?.[i] ?? 0));
}

function filledBy(portfolio: PortfolioState, part: PartState): number[] {
  return part.filledAtEnd ?? portfolio.legs.map((leg) => leg.filled);
}

export function portfolioInfoToWire(portfolio: PortfolioState, lookup: InstrumentLookup) {
  const spec = portfolio.spec;
  const instruments = spec.legs.map((leg) => lookup(leg.instrumentName));
  const qty = (i: number, lots: number) => instruments[i]?.formatQuantity(lots) ?? String(lots);
  const legs = spec.legs.map((leg, i) => {
    const state = portfolio.legs[i]!;
    const instrument = instruments[i];
    const averageTicks = state.filled > 0 ? state.notional / state.filled : null;
    const children = portfolio.children.filter((child) => childCovers(child, i));
    return {
      legId: i,
      instrument: leg.instrumentName,
      instrumentType: leg.instrumentType,
      side: SIDE_CODE[leg.side],
      quantity: qty(i, leg.amount),
      filledQuantity: qty(i, state.filled),
      remainingQuantity: qty(i, Math.max(0, leg.amount - state.filled)),
      averagePrice:
        instrument === undefined || state.filled === 0
          ? null
          : formatAveragePrice(instrument, state.notional, state.filled),
      arrivalPrice:
        instrument === undefined || state.arrivalPrice === null
          ? null
          : formatFractionalTicks(state.arrivalPrice, instrument),
      slippageBps: slippageBps(leg, averageTicks, state.arrivalPrice),
      priceOptions: pricingToWire(leg),
      priceSnapshot: leg.priceSnapshot,
      hedge: leg.hedge,
      priority: leg.priority,
      hidden: leg.hidden,
      postOnly: leg.postOnly,
      reduceOnly: leg.reduceOnly,
      timeInForce: codeOf(TIME_IN_FORCE_CODE, leg.timeInForce),
      tradeMode: codeOf(TRADE_MODE_CODE, leg.tradeMode),
      positionSide: codeOf(POSITION_SIDE_CODE, leg.positionSide),
      forCcy: leg.forCcy,
      workingOrderId: state.working,
      childOrderIds: children.map((child) => child.orderId),
    };
  });
  return {
    portfolioId: portfolio.id,
    accountId: spec.accountId,
    portfolioType: spec.portfolioType,
    portfolioStatus: portfolio.status,
    strategy: spec.strategy,
    customizedNote: spec.customizedNote,
    linkedPortfolioId: portfolio.linkedTo,
    sendToDummyAccountIds: spec.mirrorAccountIds,
    mirrorPortfolioIds: portfolio.mirrorIds,
    submitTimestamp: portfolio.submittedAt,
    startTimestamp: portfolio.startedAt,
    plannedStartTimestamp: portfolio.startAt,
    updateTimestamp: portfolio.updatedAt,
    endTimestamp: portfolio.endedAt,
    endReason: portfolio.endReason,
    endMessage: portfolio.endMessage,
    balanceTrade:
      spec.balance === null
        ? null
        : {
            parts: spec.balance.parts,
            eachLimitMs: spec.balance.eachLimitMs,
            totalLimitMs: spec.balance.totalLimitMs,
            totalEndAction: spec.balance.totalEndAction === 'CANCEL_REMAINING' ? (1 as const) : (2 as const),
            totalMs:
              portfolio.startedAt === null
                ? 0
                : (portfolio.endedAt ?? portfolio.updatedAt) - portfolio.startedAt,
          },
    twapTrade:
      spec.twap === null
        ? null
        : {
            startTimestamp: portfolio.startAt,
            durationSec: spec.twap.durationMs / 1000,
            frequencySec: spec.twap.frequencyMs / 1000,
          },
    icebergTrade:
      spec.iceberg === null
        ? null
        : {
            displayQuantity: qty(0, spec.iceberg.displayAmount),
            refreshQuantity: spec.iceberg.refreshAmount === null ? null : qty(0, spec.iceberg.refreshAmount),
          },
    legs,
    currentPart: portfolio.part < 0 ? null : portfolio.part,
    parts: portfolio.parts.map((part, k) => ({
      part: part.index,
      startTimestamp: part.startedAt,
      endTimestamp: part.endedAt,
      targetQuantities: cumulativeTargets(portfolio, k).map((lots, i) => qty(i, lots)),
      filledQuantities: filledBy(portfolio, part).map((lots, i) => qty(i, lots)),
    })),
    childOrders: portfolio.children.map((child) => {
      const name = child.combo?.instrumentName ?? spec.legs[child.leg]!.instrumentName;
      const instrument = child.combo === undefined ? instruments[child.leg] : lookup(name);
      const lots = (n: number) => instrument?.formatQuantity(n) ?? String(n);
      return {
        orderId: child.orderId,
        legId: child.leg,
        legIds: childLegs(child),
        instrument: name,
        part: child.part,
        orderType: child.market ? ('market' as const) : ('limit' as const),
        quantity: lots(child.amount),
        filledQuantity: lots(child.filled),
        price: child.price === null || instrument === undefined ? null : instrument.formatPrice(child.price),
        open: child.open,
        placedTimestamp: child.placedAt,
      };
    }),
  };
}

export type PortfolioInfoWire = ReturnType<typeof portfolioInfoToWire>;

/** A fill's average (exact, as `info` prints it), a placed order's price, or null for market. */
function eventPrice(event: PortfolioEvent, instrument: Instrument): string | null {
  if (event.notional !== undefined && event.amount !== undefined && event.amount > 0) {
    return formatAveragePrice(instrument, event.notional, event.amount);
  }
  if (event.price === null || event.price === undefined) return null;
  return formatFractionalTicks(event.price, instrument);
}

/** One `trade-news` message. */
export function tradeNewsToWire(event: PortfolioEvent, lookup: InstrumentLookup) {
  const instrument = event.instrumentName === undefined ? undefined : lookup(event.instrumentName);
  return {
    type: event.messageType,
    portfolioId: event.portfolioId,
    accountId: event.accountId,
    portfolioType: event.portfolioType,
    portfolioStatus: event.status,
    timestamp: event.timestamp,
    ...(event.legIndex === undefined ? {} : { legId: event.legIndex }),
    ...(event.part === undefined ? {} : { part: event.part }),
    ...(event.orderId === undefined ? {} : { orderId: event.orderId }),
    ...(event.instrumentName === undefined ? {} : { instrument: event.instrumentName }),
    ...(event.amount === undefined || instrument === undefined
      ? {}
      : { quantity: instrument.formatQuantity(event.amount) }),
    ...(event.price === undefined || instrument === undefined
      ? {}
      : { price: eventPrice(event, instrument) }),
    ...(event.endReason === undefined ? {} : { endReason: event.endReason }),
    ...(event.endMessage === undefined ? {} : { endMessage: event.endMessage }),
    ...(event.linkedTo === undefined ? {} : { linkedPortfolioId: event.linkedTo }),
  };
}
