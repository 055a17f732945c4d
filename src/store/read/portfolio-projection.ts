/**
 * Projection of the portfolio algorithms' `trade-news` events (sub-machine `portfolios`) into
 * the `portfolios` and `portfolio_events` read tables.
 *
 * Invariants:
 * - `portfolios`: one row per portfolio id, its latest status. The submit time, the original of
 *   a mirror (`linked_to`) and the end reason are only on some events, so those columns are
 *   `keepWhenNull`: later events never erase them.
 * - `ended_at` is set exactly when the status is terminal (COMPLETED, CANCELLED, EXPIRED,
 *   FAILED); retention only ever deletes such portfolios.
 * - `portfolio_events`: every event, keyed by (portfolio id, committing seq, index among that
 *   command's portfolio events), so re-projecting a command rewrites the same rows.
 * - `state`: the final record of a portfolio the core has pruned (`portfolio_pruned`, 7 days
 *   after it ended), from which `info` answers for it; null while the core still holds it. The
 *   prune's upsert repeats the row's other columns from that record (what its last event wrote),
 *   so a row history retention already deleted comes back whole, without events, and the next
 *   sweep deletes it again.
 * - Only `CommittedEvents.subEvents` is read; engine events are the core projection's business.
 */
import { isTerminal } from '../../algo/status.ts';
import type { PortfolioEvent, PortfolioPruned } from '../../algo/types.ts';
import {
  type CommittedEvents,
  JsonText,
  type Projection,
  type RowSink,
  type TableSpec,
} from './projection.ts';

/** The core machine's name for the portfolio sub-machine (src/app/core-factory.ts). */
export const PORTFOLIO_SUBMACHINE = 'portfolios';

export const PORTFOLIOS_TABLE: TableSpec = {
  name: 'portfolios',
  columns: [
    { name: 'portfolio_id', type: 'int', required: true },
    { name: 'account_id', type: 'int', required: true },
    { name: 'portfolio_type', type: 'text', required: true },
    { name: 'status', type: 'text', required: true },
    { name: 'last_message', type: 'text', required: true },
    { name: 'linked_to', type: 'int', keepWhenNull: true },
    { name: 'created_at', type: 'int', keepWhenNull: true },
    { name: 'updated_at', type: 'int', required: true },
    { name: 'ended_at', type: 'int' },
    { name: 'end_reason', type: 'text', keepWhenNull: true },
    { name: 'updated_seq', type: 'int', required: true },
    // Added after version 1 without a backfill: rows of older builds are of portfolios the core
    // still holds (it prunes only from this build on), and their prune fills it.
    { name: 'state', type: 'text', keepWhenNull: true },
  ],
  primaryKey: ['portfolio_id'],
  indexes: [['account_id', 'portfolio_id DESC'], ['ended_at']],
};

export const PORTFOLIO_EVENTS_TABLE: TableSpec = {
  name: 'portfolio_events',
  columns: [
    { name: 'portfolio_id', type: 'int', required: true },
    { name: 'seq', type: 'int', required: true },
    { name: 'n', type: 'int', required: true },
    { name: 'message_type', type: 'text', required: true },
    { name: 'status', type: 'text', required: true },
    { name: 'timestamp', type: 'int', required: true },
    { name: 'leg_index', type: 'int' },
    { name: 'instrument_name', type: 'text' },
    { name: 'order_id', type: 'text' },
    { name: 'amount', type: 'int' },
    { name: 'price', type: 'real' },
    { name: 'view', type: 'text', required: true },
  ],
  primaryKey: ['portfolio_id', 'seq', 'n'],
};

function isPortfolioEvent(event: unknown): event is PortfolioEvent {
  return typeof event === 'object' && event !== null && (event as { type?: unknown }).type === 'portfolio';
}

function isPrunedEvent(event: unknown): event is PortfolioPruned {
  return (
    typeof event === 'object' && event !== null && (event as { type?: unknown }).type === 'portfolio_pruned'
  );
}

/** The final record of a pruned portfolio; the other columns as its last (terminal) event set them. */
function projectPruned(event: PortfolioPruned, seq: number, out: RowSink): void {
  const portfolio = event.portfolio;
  out.upsert('portfolios', {
    portfolio_id: portfolio.id,
    account_id: portfolio.spec.accountId,
    portfolio_type: portfolio.spec.portfolioType,
    status: portfolio.status,
    last_message: `PORTFOLIO_${portfolio.status}`,
    linked_to: portfolio.linkedTo,
    created_at: portfolio.submittedAt,
    updated_at: portfolio.updatedAt,
    ended_at: portfolio.endedAt,
    end_reason: portfolio.endReason,
    updated_seq: seq,
    state: new JsonText(portfolio),
  });
}

function projectEvent(event: PortfolioEvent, seq: number, n: number, out: RowSink): void {
  const submitted = event.messageType === 'PORTFOLIO_SUBMITTED';
  out.upsert('portfolios', {
    portfolio_id: event.portfolioId,
    account_id: event.accountId,
    portfolio_type: event.portfolioType,
    status: event.status,
    last_message: event.messageType,
    linked_to: event.linkedTo ?? null,
    created_at: submitted ? event.timestamp : null,
    updated_at: event.timestamp,
    ended_at: isTerminal(event.status) ? event.timestamp : null,
    end_reason: event.endReason ?? null,
    updated_seq: seq,
  });
  out.upsert('portfolio_events', {
    portfolio_id: event.portfolioId,
    seq,
    n,
    message_type: event.messageType,
    status: event.status,
    timestamp: event.timestamp,
    leg_index: event.legIndex ?? null,
    instrument_name: event.instrumentName ?? null,
    order_id: event.orderId ?? null,
    amount: event.amount ?? null,
    price: event.price ?? null,
    view: new JsonText(event),
  });
}

/** Portfolios and their lifecycle events from the `portfolios` sub-machine's events. */
export function portfolioProjection(subMachine: string = PORTFOLIO_SUBMACHINE): Projection {
  return {
    name: 'portfolios',
    tables: [PORTFOLIOS_TABLE, PORTFOLIO_EVENTS_TABLE],
    project(committed: CommittedEvents, out: RowSink): void {
      const events = committed.subEvents?.get(subMachine);
      if (events === undefined) return;
      let n = 0;
      for (const event of events) {
        if (isPortfolioEvent(event)) projectEvent(event, committed.seq, n++, out);
        else if (isPrunedEvent(event)) projectPruned(event, committed.seq, out);
      }
    },
  };
}
