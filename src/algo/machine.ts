/**
 * The portfolio algorithm layer as a sub-machine of the deterministic core (src/core/submachine.ts).
 *
 * Commands: `submit_portfolio` (a validated PortfolioSpec), `cancel_portfolio`,
 * `cancel_all_portfolios`. Child orders are placed, amended and cancelled synchronously through the
 * engine inside the journaled command that decided them, with its stamp; the engine's order
 * events are absorbed delta-based (children.ts), whether they arrive in a result or in `react`;
 * a COMMON combo child's legs are filled from its combo trades' leg trades (portfolio-state.ts).
 *
 * Invariants:
 * - Portfolio ids come from a counter in the state (1, 2, 3…); mirrors take the next ids.
 * - The state is plain JSON (`snapshot`), and `restore(snapshot)` rebuilds the orderId index, so
 *   a restored layer and a replayed one take identical decisions: no child order is duplicated.
 * - Only an active portfolio (PENDING, WORKING) places orders; a terminal one has none open.
 * - A finished portfolio is pruned `finishedRetentionMs` (7 days) after it ended, together with
 *   its mirrors (or original) once every one of them has ended that long ago: its record, its
 *   children's orderId index entries and every reference to it leave the state. The `advance` of
 *   the first command past that time does it, by command time, so live, replay and restore prune
 *   alike. A `portfolio_pruned` event carries the final record to the read store, which answers
 *   `info` for it from then on.
 */
import { createHash } from 'node:crypto';
import type { CommandStamp } from '../core/commands.ts';
import type { CoreEvent, TradeView } from '../core/events.ts';
import type { EnginePort, SubMachine, SubResult } from '../core/submachine.ts';
import type { ChildContext } from './children.ts';
import { cancelPortfolio, failOnExpiry } from './lifecycle.ts';
import type { AlgoMarketView } from './market-view.ts';
import {
  absorbComboTrade,
  absorbOrderView,
  type ChildState,
  newPortfolio,
  type PortfolioState,
} from './portfolio-state.ts';
import { isActive, isTerminal } from './status.ts';
import {
  captureArrival,
  evaluate,
  expiredLeg,
  MAX_PLACEMENTS_PER_COMMAND,
  onTime,
  type StepContext,
  startPortfolio,
  wakeAt,
} from './steps.ts';
import {
  ALGO_COMMAND_TYPES,
  type AlgoCommand,
  type AlgoEvent,
  type AlgoValue,
  type CancelAllPortfolios,
  type CancelPortfolio,
  type PortfolioEvent,
  type PortfolioPruned,
  type SubmitPortfolio,
} from './types.ts';
import { WakeupQueue } from './wakeup-queue.ts';

/** A TWAP start more than this far in the past is refused (the gateway's clock tolerance). */
export const START_TOLERANCE_MS = 15_000;

/** A finished portfolio stays in the core this long after it (and its group) ended: 7 days. */
export const FINISHED_RETENTION_MS = 7 * 24 * 3_600_000;

/** Pruned records kept for reads until their prune is durable in the read store (not state). */
const RECENTLY_PRUNED_MAX = 1_000;
/** What `react` returns for a command no portfolio follows (shared: callers only read it). */
const NO_EVENTS: readonly PortfolioEvent[] = Object.freeze([]);

export interface PortfolioMachineOptions {
  /** How long a finished portfolio stays after it ended (default `FINISHED_RETENTION_MS`). */
  readonly finishedRetentionMs?: number;
}

interface AlgoSnapshot {
  readonly version: 1;
  readonly nextPortfolioId: number;
  readonly portfolios: readonly PortfolioState[];
}

type Refusal = Extract<SubResult<AlgoValue, AlgoEvent>, { ok: false }>;

function refuse(name: string, message: string, field: string, events: PortfolioEvent[]): Refusal {
  return { ok: false, error: { name, message, data: { field } }, events };
}

export class PortfolioMachine implements SubMachine<AlgoCommand, AlgoValue, AlgoEvent> {
  readonly commandTypes = ALGO_COMMAND_TYPES;
  private nextPortfolioId = 1;
  private readonly portfolios = new Map<number, PortfolioState>();
  private readonly childIndex = new Map<string, { portfolio: PortfolioState; child: ChildState }>();
  /** Portfolios that are PENDING or WORKING (the only ones time can move). */
  private readonly active = new Set<PortfolioState>();
  /** When each active portfolio next needs a step. */
  private readonly wakeups = new WakeupQueue();
  /** Portfolios with absorbed changes not yet evaluated (within one command). */
  private readonly pending = new Set<PortfolioState>();
  /**
   * Children placed per portfolio in the command `placedSeq` (a command's advance, execute and
   * reactions share its seq). Not state: it starts afresh with every command, on replay too.
   */
  private placedSeq = -1;
  private placed = new Map<number, number>();
  /**
   * Finished portfolios by (endedAt, id), from `finishedHead` on: the prune candidates. Derived
   * (restore rebuilds it from the records), so the snapshot and its hash are unchanged.
   */
  private finished: { readonly id: number; readonly endedAt: number }[] = [];
  private finishedHead = 0;
  private readonly queued = new Set<number>();
  /** The last pruned records, for reads only (see RECENTLY_PRUNED_MAX); not state. */
  private readonly recentlyPruned = new Map<number, PortfolioState>();
  private readonly finishedRetentionMs: number;

  constructor(
    private readonly market: AlgoMarketView,
    options: PortfolioMachineOptions = {},
  ) {
    this.finishedRetentionMs = options.finishedRetentionMs ?? FINISHED_RETENTION_MS;
  }

  // ------------------------------------------------------------------------------------------
  // Reads (not journaled)

  portfolio(portfolioId: number): PortfolioState | undefined {
    return this.portfolios.get(portfolioId);
  }

  portfoliosOf(accountId: number): PortfolioState[] {
    return [...this.portfolios.values()].filter((p) => p.spec.accountId === accountId);
  }

  /**
   * A portfolio pruned lately (its prune may not be in the read store yet), for reads only. Older
   * ones are in the read store alone.
   */
  prunedPortfolio(portfolioId: number): PortfolioState | undefined {
    return this.recentlyPruned.get(portfolioId);
  }

  /** The portfolio that owns a child order, if any. */
  portfolioOfOrder(orderId: string): PortfolioState | undefined {
    return this.childIndex.get(orderId)?.portfolio;
  }

  // ------------------------------------------------------------------------------------------
  // SubMachine

  execute(command: AlgoCommand, engine: EnginePort): SubResult<AlgoValue, AlgoEvent> {
    const out: PortfolioEvent[] = [];
    const context = this.context(command, engine, out);
    const result = this.dispatch(command, context, out);
    this.flush(context);
    return result;
  }

  private dispatch(
    command: AlgoCommand,
    context: StepContext,
    out: PortfolioEvent[],
  ): SubResult<AlgoValue, AlgoEvent> {
    switch (command.type) {
      case 'submit_portfolio':
        return this.submit(command, context, out);
      case 'cancel_portfolio':
        return this.cancelOne(command, context, out);
      case 'cancel_all_portfolios':
        return this.cancelAll(command, context, out);
      default: {
        const _exhaustive: never = command;
        return refuse(
          'invalid_arguments',
          `unknown command ${(_exhaustive as { type: string }).type}`,
          'type',
          out,
        );
      }
    }
  }

  react(
    engineEvents: readonly CoreEvent[],
    stamp: CommandStamp,
    engine: EnginePort,
  ): readonly PortfolioEvent[] {
    // Most commands concern no portfolio: they cost no step context (its closures were about a
    // twelfth of the bytes an order allocates).
    if (this.pending.size === 0 && !this.concernsAny(engineEvents)) return NO_EVENTS;
    const out: PortfolioEvent[] = [];
    const context = this.context(stamp, engine, out);
    this.absorb(engineEvents, context);
    this.flush(context);
    return out;
  }

  /** True when `absorb` acts on one of the events (it skips every other one). */
  private concernsAny(events: readonly CoreEvent[]): boolean {
    for (const event of events) {
      if (event.type === 'instrument' && event.state === 'expired') return true;
      if (event.type === 'trade' && event.trade.legs !== undefined) return true;
      if (event.type === 'order' && event.order.owner !== null && this.childIndex.has(event.order.orderId))
        return true;
    }
    return false;
  }

  /**
   * Evaluates every portfolio whose children changed (a fill or a close), including changes
   * caused by another portfolio's orders during this command, until nothing new happens.
   */
  private flush(context: StepContext): void {
    for (let round = 0; round < 8 && this.pending.size > 0; round++) {
      const batch = [...this.pending].sort((a, b) => a.id - b.id);
      this.pending.clear();
      for (const portfolio of batch) {
        if (portfolio.status === 'WORKING') evaluate(context, portfolio);
        this.track(portfolio);
      }
    }
  }

  advance(stamp: CommandStamp, engine: EnginePort): readonly AlgoEvent[] {
    const pruned = this.pruneFinished(stamp.ts);
    const next = this.nextWakeup();
    if (next === null || next > stamp.ts) return pruned;
    const out: PortfolioEvent[] = [];
    const context = this.context(stamp, engine, out);
    const due = this.wakeups
      .takeDue(stamp.ts)
      .sort((a, b) => a - b)
      .map((id) => this.portfolios.get(id)!);
    for (const portfolio of due) {
      onTime(context, portfolio);
      this.track(portfolio);
    }
    this.flush(context);
    return pruned.length === 0 ? out : [...pruned, ...out];
  }

  nextWakeup(): number | null {
    return this.wakeups.peek();
  }

  /**
   * Prunes the groups (an original and its mirrors) whose every member is finished, has no open
   * child (a finished portfolio never has one) and ended at or before `now − finishedRetentionMs`;
   * one `portfolio_pruned` event per member, groups in original-id order. No wakeup is asked for:
   * the next command does it, as the RFQ desk's closed RFQs.
   */
  private pruneFinished(now: number): PortfolioPruned[] {
    const cutoff = now - this.finishedRetentionMs;
    const finished = this.finished;
    if (this.finishedHead >= finished.length || finished[this.finishedHead]!.endedAt > cutoff) return [];
    const groups = new Map<number, PortfolioState[]>();
    while (this.finishedHead < finished.length && finished[this.finishedHead]!.endedAt <= cutoff) {
      const { id } = finished[this.finishedHead++]!;
      this.queued.delete(id);
      const portfolio = this.portfolios.get(id);
      if (portfolio === undefined) continue;
      const group = this.groupOf(portfolio);
      const due = group.every(
        (p) =>
          isTerminal(p.status) &&
          p.endedAt !== null &&
          p.endedAt <= cutoff &&
          !p.children.some((child) => child.open),
      );
      // A member still working (or ended later) prunes the group when its own turn comes.
      if (due) groups.set(group[0]!.id, group);
    }
    if (this.finishedHead > 1024 && this.finishedHead * 2 > finished.length) {
      this.finished = finished.slice(this.finishedHead);
      this.finishedHead = 0;
    }
    const out: PortfolioPruned[] = [];
    for (const root of [...groups.keys()].sort((a, b) => a - b)) {
      for (const portfolio of groups.get(root)!) {
        this.forget(portfolio);
        out.push({
          type: 'portfolio_pruned',
          portfolioId: portfolio.id,
          accountId: portfolio.spec.accountId,
          timestamp: now,
          portfolio,
        });
      }
    }
    return out;
  }

  /** An original and its mirrors (still held), the original first. */
  private groupOf(portfolio: PortfolioState): PortfolioState[] {
    const root = portfolio.linkedTo === null ? portfolio : this.portfolios.get(portfolio.linkedTo);
    if (root === undefined) return [portfolio];
    const group = [root];
    for (const id of root.mirrorIds) {
      const mirror = this.portfolios.get(id);
      if (mirror !== undefined) group.push(mirror);
    }
    return group;
  }

  /**
   * The accounts a portfolio's group trades in: the original's and its mirrors' (a mirror's spec
   * names only its own account). Its references leave their resting orders out (`OwnAccounts`).
   */
  private groupAccounts(portfolio: PortfolioState): readonly number[] {
    const root = portfolio.linkedTo === null ? portfolio : this.portfolios.get(portfolio.linkedTo);
    const accounts = [portfolio.spec.accountId];
    if (root === undefined) return accounts;
    for (const accountId of [root.spec.accountId, ...root.spec.mirrorAccountIds]) {
      if (!accounts.includes(accountId)) accounts.push(accountId);
    }
    return accounts;
  }

  /** Drops a pruned portfolio from the state and every index. */
  private forget(portfolio: PortfolioState): void {
    this.portfolios.delete(portfolio.id);
    for (const child of portfolio.children) {
      if (this.childIndex.get(child.orderId)?.portfolio === portfolio) this.childIndex.delete(child.orderId);
    }
    this.active.delete(portfolio);
    this.pending.delete(portfolio);
    this.wakeups.schedule(portfolio.id, null);
    this.queued.delete(portfolio.id);
    this.recentlyPruned.set(portfolio.id, portfolio);
    if (this.recentlyPruned.size > RECENTLY_PRUNED_MAX) {
      this.recentlyPruned.delete(this.recentlyPruned.keys().next().value!);
    }
  }

  /** Files a finished portfolio as a prune candidate (once), by (endedAt, id). */
  private queueFinished(portfolio: PortfolioState): void {
    if (!isTerminal(portfolio.status) || portfolio.endedAt === null || this.queued.has(portfolio.id)) return;
    this.queued.add(portfolio.id);
    const entry = { id: portfolio.id, endedAt: portfolio.endedAt };
    const finished = this.finished;
    let at = finished.length;
    while (
      at > this.finishedHead &&
      (finished[at - 1]!.endedAt > entry.endedAt ||
        (finished[at - 1]!.endedAt === entry.endedAt && finished[at - 1]!.id > entry.id))
    ) {
      at--;
    }
    finished.splice(at, 0, entry);
  }

  snapshot(): AlgoSnapshot {
    const portfolios = [...this.portfolios.values()].sort((a, b) => a.id - b.id);
    return structuredClone({ version: 1, nextPortfolioId: this.nextPortfolioId, portfolios });
  }

  restore(snapshot: unknown): void {
    const data = structuredClone(snapshot) as AlgoSnapshot;
    if (data.version !== 1) throw new Error(`unsupported algo snapshot version ${String(data.version)}`);
    this.nextPortfolioId = data.nextPortfolioId;
    this.portfolios.clear();
    this.childIndex.clear();
    this.active.clear();
    this.wakeups.clear();
    this.finished = [];
    this.finishedHead = 0;
    this.queued.clear();
    this.recentlyPruned.clear();
    // Fields added to the version-1 record since it was first written are optional and stay
    // absent here: filling them in would change the state hash recovery checks the snapshot by.
    for (const portfolio of data.portfolios) {
      this.portfolios.set(portfolio.id, portfolio);
      for (const child of portfolio.children) this.childIndex.set(child.orderId, { portfolio, child });
      this.track(portfolio);
      if (isTerminal(portfolio.status) && portfolio.endedAt !== null) {
        this.finished.push({ id: portfolio.id, endedAt: portfolio.endedAt });
        this.queued.add(portfolio.id);
      }
    }
    this.finished.sort((a, b) => a.endedAt - b.endedAt || a.id - b.id);
  }

  stateHash(): string {
    return createHash('sha256').update(JSON.stringify(this.snapshot())).digest('hex');
  }

  // ------------------------------------------------------------------------------------------

  private context(stamp: CommandStamp, engine: EnginePort, out: PortfolioEvent[]): StepContext {
    const machine = this;
    const context: StepContext = {
      stamp: { seq: stamp.seq, ts: stamp.ts },
      engine,
      out,
      market: this.market,
      placement(portfolio) {
        if (machine.placedSeq !== stamp.seq) {
          machine.placedSeq = stamp.seq;
          machine.placed = new Map();
        }
        const count = machine.placed.get(portfolio.id) ?? 0;
        if (count >= MAX_PLACEMENTS_PER_COMMAND) return false;
        machine.placed.set(portfolio.id, count + 1);
        return true;
      },
      ownAccounts(portfolio) {
        return machine.groupAccounts(portfolio);
      },
      registerChild(portfolio, child) {
        machine.childIndex.set(child.orderId, { portfolio, child });
      },
      absorb(events) {
        machine.absorb(events, context);
      },
      event(portfolio, messageType, extra = {}) {
        // Every trade-news message is a change `info` shows (a part, a child, a fill, a status):
        // updateTimestamp moves with it, as the read store's updated_at does.
        portfolio.updatedAt = stamp.ts;
        // Every status change is announced here, so every finished portfolio is filed.
        machine.queueFinished(portfolio);
        out.push({
          type: 'portfolio',
          messageType,
          portfolioId: portfolio.id,
          accountId: portfolio.spec.accountId,
          portfolioType: portfolio.spec.portfolioType,
          status: portfolio.status,
          timestamp: stamp.ts,
          ...extra,
        });
      },
    };
    return context;
  }

  /** Records child fills, closes and resizes; the portfolios that changed wait in `pending`. */
  private absorb(events: readonly CoreEvent[], context: ChildContext): void {
    const touched = this.pending;
    for (const event of events) {
      if (event.type === 'instrument') {
        if (event.state === 'expired') this.onExpired(event.instrumentName, context);
        continue;
      }
      if (event.type === 'trade' && event.trade.legs !== undefined) {
        this.absorbComboTrade(event.trade, context);
        continue;
      }
      if (event.type !== 'order' || event.order.owner === null) continue;
      const entry = this.childIndex.get(event.order.orderId);
      if (entry === undefined) continue;
      const { portfolio, child } = entry;
      const notionalBefore = child.notional;
      const wasOpen = child.open;
      const amountBefore = child.amount;
      const filled = absorbOrderView(portfolio, child, event.order, context.stamp.ts);
      if (filled > 0) {
        portfolio.updatedAt = context.stamp.ts;
        context.event(portfolio, 'ORDER_FILLED', {
          legIndex: child.leg,
          orderId: child.orderId,
          instrumentName: event.order.instrumentName,
          amount: filled,
          price: (child.notional - notionalBefore) / filled,
          notional: child.notional - notionalBefore,
        });
      }
      // A resize from outside (`private/edit` of a child) is looked at too: the portfolio cuts a
      // child back to what it still needs, so a grown child cannot trade past the leg's quantity.
      if (filled > 0 || wasOpen !== child.open || amountBefore !== child.amount) touched.add(portfolio);
    }
  }

  /**
   * An instrument expired (settled): every active portfolio with lots still to fill on it ends
   * FAILED (`instrument_expired`) at once, in id order, its other children cancelled. The
   * settlement already cancelled its children on that instrument (their closes came first in the
   * same batch). A portfolio whose leg there is filled goes on.
   */
  private onExpired(instrumentName: string, context: ChildContext): void {
    const hit = [...this.active]
      .filter((p) => p.spec.legs.some((leg) => leg.instrumentName === instrumentName))
      .sort((a, b) => a.id - b.id);
    for (const portfolio of hit) {
      const leg = expiredLeg(this.market, portfolio, context.stamp.ts);
      if (leg === null) continue;
      failOnExpiry(context, portfolio, leg);
      this.track(portfolio);
    }
  }

  /**
   * A trade on a combo's book: each party that is a combo child fills its portfolio's legs at
   * the leg trades' prices, one ORDER_FILLED per leg (a trade seen again changes nothing).
   */
  private absorbComboTrade(trade: TradeView, context: ChildContext): void {
    for (const party of [trade.taker, trade.maker]) {
      if (party.owner === null) continue;
      const entry = this.childIndex.get(party.orderId);
      if (entry === undefined || entry.child.combo === undefined) continue;
      const { portfolio, child } = entry;
      const fills = absorbComboTrade(portfolio, child, trade);
      for (const fill of fills) {
        context.event(portfolio, 'ORDER_FILLED', {
          legIndex: fill.leg,
          orderId: child.orderId,
          instrumentName: fill.instrumentName,
          amount: fill.amount,
          price: fill.notional / fill.amount,
          notional: fill.notional,
        });
      }
      if (fills.length > 0) this.pending.add(portfolio);
    }
  }

  /** Re-files a portfolio after a change: active set and wakeup. */
  private track(portfolio: PortfolioState): void {
    const active = isActive(portfolio.status);
    if (active) this.active.add(portfolio);
    else this.active.delete(portfolio);
    this.wakeups.schedule(portfolio.id, active ? wakeAt(portfolio) : null);
  }

  private submit(command: SubmitPortfolio, context: StepContext, out: PortfolioEvent[]) {
    const spec = command.portfolio;
    for (const [i, leg] of spec.legs.entries()) {
      // As private/buy and create_rfq answer an expired instrument, from its expiry instant on
      // (before its settlement too: the engine refuses every order then).
      if (this.market.expired(leg.instrumentName, command.ts)) {
        return refuse(
          'instrument_expired',
          `instrument ${leg.instrumentName} has expired`,
          `legs[${i}].instrument`,
          out,
        );
      }
      if (this.market.instrument(leg.instrumentName) === undefined) {
        return refuse(
          'invalid_instrument',
          `instrument ${leg.instrumentName} not found`,
          `legs[${i}].instrument`,
          out,
        );
      }
    }
    let startAt = command.ts;
    const start = spec.twap?.startTimestamp ?? null;
    if (start !== null) {
      if (start < command.ts - START_TOLERANCE_MS) {
        return refuse(
          'invalid_portfolio',
          `twapTrade.startTimestamp ${start} is more than ${START_TOLERANCE_MS} ms in the past`,
          'twapTrade.startTimestamp',
          out,
        );
      }
      startAt = Math.max(start, command.ts);
    }
    const original = this.create(spec, command.ts, startAt, null, context);
    for (const accountId of spec.mirrorAccountIds) {
      const mirror = this.create(
        { ...spec, accountId, mirrorAccountIds: [] },
        command.ts,
        startAt,
        original.id,
        context,
      );
      original.mirrorIds.push(mirror.id);
    }
    for (const portfolio of [original, ...original.mirrorIds.map((id) => this.portfolios.get(id)!)]) {
      if (portfolio.startAt <= command.ts) startPortfolio(context, portfolio);
      this.track(portfolio);
    }
    return {
      ok: true as const,
      value: {
        kind: 'submitted' as const,
        portfolioId: original.id,
        mirrorPortfolioIds: [...original.mirrorIds],
      },
      events: out,
    };
  }

  private create(
    spec: SubmitPortfolio['portfolio'],
    now: number,
    startAt: number,
    linkedTo: number | null,
    context: StepContext,
  ): PortfolioState {
    const portfolio = newPortfolio(this.nextPortfolioId++, spec, now, startAt, linkedTo);
    this.portfolios.set(portfolio.id, portfolio);
    captureArrival(context, portfolio);
    context.event(portfolio, 'PORTFOLIO_SUBMITTED', linkedTo === null ? {} : { linkedTo });
    return portfolio;
  }

  private cancelOne(command: CancelPortfolio, context: StepContext, out: PortfolioEvent[]) {
    const portfolio = this.portfolios.get(command.portfolioId);
    if (
      portfolio === undefined ||
      (command.accountId !== null && portfolio.spec.accountId !== command.accountId)
    ) {
      return refuse('portfolio_not_found', `portfolio ${command.portfolioId} not found`, 'portfolioId', out);
    }
    // A finished original still reaches its mirrors that work on: cancelling it cancels them.
    const liveMirrors = portfolio.mirrorIds.some((id) => {
      const mirror = this.portfolios.get(id);
      return mirror !== undefined && isActive(mirror.status);
    });
    if (!isActive(portfolio.status) && !liveMirrors) {
      return refuse(
        'portfolio_not_active',
        `portfolio ${command.portfolioId} is ${portfolio.status}`,
        'portfolioId',
        out,
      );
    }
    const cancelled = isActive(portfolio.status) ? [portfolio.id] : [];
    cancelPortfolio(context, portfolio);
    this.track(portfolio);
    this.cancelMirrors(context, portfolio, cancelled);
    return { ok: true as const, value: { kind: 'cancelled' as const, portfolioIds: cancelled }, events: out };
  }

  private cancelAll(command: CancelAllPortfolios, context: StepContext, out: PortfolioEvent[]) {
    const cancelled: number[] = [];
    const matches = (p: PortfolioState) =>
      p.spec.accountId === command.accountId &&
      (command.portfolioType === null || p.spec.portfolioType === command.portfolioType);
    // The account's active portfolios, and the active mirrors of its originals (finished or not:
    // a submit's mirrors are reached through the account it was submitted for).
    const targets = [...this.active]
      .filter((p) => {
        if (matches(p)) return true;
        const original = p.linkedTo === null ? undefined : this.portfolios.get(p.linkedTo);
        return original !== undefined && matches(original);
      })
      .sort((a, b) => a.id - b.id);
    for (const target of targets) {
      if (cancelPortfolio(context, target)) cancelled.push(target.id);
      this.track(target);
      this.cancelMirrors(context, target, cancelled);
    }
    return { ok: true as const, value: { kind: 'cancelled' as const, portfolioIds: cancelled }, events: out };
  }

  /** Cancelling an original cancels its mirrors (in other accounts); their ids join `cancelled`. */
  private cancelMirrors(context: StepContext, original: PortfolioState, cancelled: number[]): void {
    for (const mirrorId of original.mirrorIds) {
      const mirror = this.portfolios.get(mirrorId);
      if (mirror === undefined) continue;
      if (cancelPortfolio(context, mirror)) cancelled.push(mirror.id);
      this.track(mirror);
    }
  }
}
