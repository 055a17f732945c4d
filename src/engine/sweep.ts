/**
 * The dry run of a taker's sweep: how many lots an order would take from the opposite book, and
 * how deep it would reach, as the match (matching.ts `match`) would play it, without changing
 * anything. Placing uses it to decide a fill_or_kill order (`fillableLots`) and to size a market
 * order's limit (`deepestNeeded`, trading.ts `marketTerms`).
 */
import type { Side } from '../core/types.ts';
import type { Account } from './accounts.ts';
import { reducibleLots } from './claim-queues.ts';
import type { LinkGroup } from './linked-orders.ts';
import { FLAG_ICEBERG, FLAG_REDUCE_ONLY, type Order } from './order.ts';
import { isClosedState } from './order-state.ts';
import type { PriceLevel } from './price-level.ts';
import type { InstrumentState, VenueState } from './state.ts';

/** Lots available to a fill-or-kill taker up to `limit`, stopping once `needed` is reached (`sweepable`). */
export function fillableLots(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  limit: number,
  needed: number,
): number | 'overlap' {
  const lots = sweepable(state, instrument, account, side, limit, needed);
  return lots < 0 ? 'overlap' : lots;
}

/**
 * The price of the deepest opposite level a taker of `needed` lots reaches (as `sweepable`
 * walks: own orders skipped, or the end in reject-taker mode; what the sweep itself takes away
 * left out), the last level when the book holds less; null when that side is empty.
 */
export function deepestNeeded(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  needed: number,
): number | null {
  sweepable(
    state,
    instrument,
    account,
    side,
    side === 'buy' ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY,
    needed,
  );
  return sweptPrice;
}

/**
 * The price of the deepest level at which the last `sweepable` met an order the sweep had not
 * already cancelled (one it took lots from, or one it found nothing to take from: an own order, a
 * reduce-only one with nothing to reduce); null when it met none. Read right after the call.
 */
let sweptPrice: number | null = null;

/**
 * The lots a taker of `account` on `side` would take from the opposite book up to `limit`,
 * stopping once `needed` is reached, as `match` (matching.ts) takes them; -1 when it would first
 * meet an order of its own account in reject-taker mode (own orders are skipped otherwise: the
 * match cancels them). Sets `sweptPrice`.
 *
 * The match takes liquidity away as it goes: a one_cancels_other maker's fill cancels or cuts its
 * partners (`reactMember`, oco.ts), and a reduce-only maker trades at most its position at fill
 * time, which its account's earlier fills in the same sweep have shrunk. Reading the book as it
 * stands would count those lots and let a fill_or_kill order fill in part. Most books have
 * neither kind of maker: this walk reads them as they stand, allocating nothing, and hands the
 * walk to `simulatedSweep` from the start when it meets the first such maker.
 */
function sweepable(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  limit: number,
  needed: number,
): number {
  const buying = side === 'buy';
  // Members of a linked group always have extras (`ocoRef`): a plain order is passed on its flags.
  const linked = state.advanced.linkOf.size !== 0;
  const ladder = instrument.book.opposite(side);
  let total = 0;
  sweptPrice = null;
  for (let depth = 0; ; depth++) {
    const level = ladder.levelAtDepth(depth);
    if (level === null || (buying ? level.price > limit : level.price < limit)) return total;
    sweptPrice = level.price;
    for (let o = level.head; o !== null; o = o.next) {
      if (o.accountId === account.id) {
        if (account.selfTradeMode === 'reject_taker') return -1;
        continue;
      }
      if (
        (o.flags & FLAG_REDUCE_ONLY) !== 0 ||
        (linked && o.extras !== null && ocoMember(state, o) !== null) ||
        // An iceberg's refreshed rest goes behind later orders, which may be the taker's own.
        ((o.flags & FLAG_ICEBERG) !== 0 && account.selfTradeMode === 'reject_taker')
      )
        return simulatedSweep(state, instrument, account, side, limit, needed);
      total += o.amount - o.filled;
      if (total >= needed) return total;
    }
  }
}

/** The one_cancels_other group `order` is a live member of, as `match` finds it; null when none. */
function ocoMember(state: VenueState, order: Order): LinkGroup | null {
  const group = state.advanced.linkOf.get(order.id);
  return group?.members.includes(order.id) ? group : null;
}

/** What the simulated sweep has done to one resting order so far (`simulatedSweep`). */
interface Swept {
  /** Lots it has filled in the sweep. */
  taken: number;
  /** Lots an incremental OCO partner's fills have cut from its amount. */
  cut: number;
  /** An iceberg's current display. */
  display: number;
  /** Cancelled in the sweep (by an OCO partner's fill, or reduce-only with nothing to reduce). */
  dead: boolean;
  /** Moved to the tail of its level (an iceberg refreshed or cut): skipped where it was. */
  moved: boolean;
  /** Its latest entry in its level's list of moved orders. */
  tailIndex: number;
}

/**
 * `sweepable` for a book with reduce-only or linked makers: the match played out without changing
 * anything. Levels best first; each level's orders in time priority, then the orders moved to its
 * tail in the order they moved (an iceberg whose display ran out refreshes there, as does one an
 * incremental partner cuts, `refreshDisplay`, `shrink` in oco.ts), as the match, which reads the
 * level again from its head after any reaction, meets them. Per fill, as `match` does:
 * - an iceberg trades at most its display;
 * - a reduce-only maker at most what its account's position allows less the lots that account has
 *   already given in the sweep (every lot it gives is on this one side, and each shrinks the
 *   position by one until it is flat); with none left it is cancelled;
 * - then a live member of a one_cancels_other group reacts (`reactMember`, oco.ts): first_hit, or
 *   its complete fill, cancels every other member; incremental cuts each other by its share of
 *   the cumulative fill (floor(filled × theirs / its) less what was cut before), cancelling one
 *   cut to nothing. The group is then over (first_hit, complete fill) and reacts no more.
 * A reduce-only maker left with lots it may no longer trade (capped) would be met again and
 * cancelled: it counts nothing more, so it is not met again here.
 */
function simulatedSweep(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  limit: number,
  needed: number,
): number {
  const buying = side === 'buy';
  const ladder = instrument.book.opposite(side);
  const swept = new Map<Order, Swept>();
  /** Lots each maker account has given in the sweep. */
  const given = new Map<number, number>();
  /** Orders moved to the tail of their level, by level (entries superseded by a later move are stale). */
  const tails = new Map<PriceLevel, Order[]>();
  /** Groups whose members were all cancelled (first_hit, or a complete fill). */
  const fired = new Set<LinkGroup>();
  /** Incremental cuts so far by `${from}>${to}`, over the group's own `cut`. */
  const cuts = new Map<string, number>();
  const reject = account.selfTradeMode === 'reject_taker';
  const linked = state.advanced.linkOf.size !== 0;
  let total = 0;
  sweptPrice = null;

  const entry = (o: Order): Swept => {
    let s = swept.get(o);
    if (s === undefined) {
      const display = (o.flags & FLAG_ICEBERG) !== 0 ? o.extras!.displayAmount! : 0;
      s = { taken: 0, cut: 0, display, dead: false, moved: false, tailIndex: -1 };
      swept.set(o, s);
    }
    return s;
  };
  const remaining = (o: Order, s: Swept | undefined): number =>
    o.amount - o.filled - (s === undefined ? 0 : s.taken + s.cut);
  const toTail = (o: Order, s: Swept): void => {
    const level = o.level;
    if (level === null) return;
    let tail = tails.get(level);
    if (tail === undefined) {
      tail = [];
      tails.set(level, tail);
    }
    s.moved = true;
    s.tailIndex = tail.length;
    tail.push(o);
  };
  /** `shrink` (oco.ts): an incremental partner's cut. */
  const cutMember = (o: Order, lots: number): void => {
    const s = entry(o);
    if (lots >= remaining(o, s)) {
      s.dead = true;
      return;
    }
    // Only an order in a book matters here (an untriggered one never meets the taker).
    if (o.level === null) return;
    s.cut += lots;
    if ((o.flags & FLAG_ICEBERG) !== 0) {
      s.display = Math.min(s.display, remaining(o, s));
      toTail(o, s);
    }
  };
  /** `reactMember` (oco.ts) after a fill of `o`, a live member of `group`. */
  const react = (o: Order, s: Swept, group: LinkGroup): void => {
    const filled = o.filled + s.taken;
    if (group.condition === 'first_hit' || filled === o.amount - s.cut) {
      fired.add(group);
      for (const id of group.members) {
        const other = id === o.id ? undefined : state.orders.get(id);
        if (other !== undefined) entry(other).dead = true;
      }
      return;
    }
    if (group.condition !== 'incremental') return;
    for (const id of group.members) {
      if (id === o.id) continue;
      const other = state.orders.get(id);
      if (other === undefined || isClosedState(other.state) || swept.get(other)?.dead === true) continue;
      const key = `${o.id}>${id}`;
      const due = Math.floor((filled * group.joined[id]!) / group.joined[o.id]!);
      const cut = due - (cuts.get(key) ?? group.cut[key] ?? 0);
      if (cut <= 0) continue;
      cuts.set(key, due);
      cutMember(other, cut);
    }
  };
  /** The taker meets `o` at `level`: 1 once `needed` is reached, -1 at an own order in reject mode, else 0. */
  const meet = (o: Order, level: PriceLevel): number => {
    let s = swept.get(o);
    if (s?.dead === true) return 0;
    sweptPrice = level.price;
    // Own orders: the match stops (reject mode) or cancels them, which sets nothing off.
    if (o.accountId === account.id) return reject ? -1 : 0;
    const iceberg = (o.flags & FLAG_ICEBERG) !== 0;
    let lots = Math.min(needed - total, remaining(o, s));
    if (iceberg) lots = Math.min(lots, s === undefined ? o.extras!.displayAmount! : s.display);
    const maker = o.accountId;
    if ((o.flags & FLAG_REDUCE_ONLY) !== 0) {
      const position = instrument.position(state.accounts.get(maker)!);
      lots = Math.min(lots, reducibleLots(position, o.side) - (given.get(maker) ?? 0));
      if (lots <= 0) {
        // Cancelled (`reduce_only`), which sets nothing off either.
        entry(o).dead = true;
        return 0;
      }
    }
    total += lots;
    if (total >= needed) return 1;
    given.set(maker, (given.get(maker) ?? 0) + lots);
    const group = linked ? ocoMember(state, o) : null;
    // Filled in full, or a reduce-only order capped, which the match meets again only to cancel:
    // either way never met again here, as nothing moves an order that is neither.
    if (!iceberg && group === null) return 0;
    s ??= entry(o);
    s.taken += lots;
    if (iceberg) {
      // `refreshDisplay`: a used-up display refreshes at the tail, before the group reacts.
      s.display -= lots;
      const left = remaining(o, s);
      if (s.display === 0 && left > 0) {
        s.display = Math.min(o.extras!.refreshAmount!, left);
        toTail(o, s);
      }
    }
    if (group !== null && !fired.has(group)) react(o, s, group);
    return 0;
  };

  for (let depth = 0; ; depth++) {
    const level = ladder.levelAtDepth(depth);
    if (level === null || (buying ? level.price > limit : level.price < limit)) return total;
    for (let o = level.head; o !== null; o = o.next) {
      if (swept.get(o)?.moved === true) continue;
      const met = meet(o, level);
      if (met !== 0) return met < 0 ? -1 : total;
    }
    const tail = tails.get(level);
    if (tail === undefined) continue;
    for (let i = 0; i < tail.length; i++) {
      const o = tail[i]!;
      if (swept.get(o)!.tailIndex !== i) continue;
      const met = meet(o, level);
      if (met !== 0) return met < 0 ? -1 : total;
    }
  }
}
