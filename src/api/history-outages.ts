/**
 * The history store's outages as `unavailable`: a read store that cannot be reached (its
 * database down or restarting, a connection dropped) is answered with an error a client may
 * retry, not `internal_error`, which says the service is at fault; so is one that stops answering
 * (a query past the read store's deadline, ReadDbTimeoutError). So is a store still behind the
 * caller's acknowledged commands once the query's wait ran out (`ReadStoreBehindError`): the
 * query is refused rather than answered without them (`data.reason: 'history_behind'`,
 * `safeToRetry: true`, `behindCommands`). The portfolio archive (`info` of a pruned portfolio) is
 * read from the same store and answered the same way. Other errors pass as they are.
 */
import { VenueError } from '../domain/errors.ts';
import { ReadStoreBehindError } from '../store/read/read-store.ts';
import type { PortfolioArchive } from './portfolios/routes.ts';
import type { HistoryPort } from './ports.ts';

/** Node's socket errors and PostgreSQL's connection (08), resources (53) and operator-intervention (57) classes. */
const OUTAGE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
const OUTAGE_SQLSTATE = /^(08|53|57)/;

export function isStorageOutage(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (OUTAGE_CODES.has(code) || OUTAGE_SQLSTATE.test(code))) return true;
  // node-postgres after the server went away, or stopped answering within a deadline (the read
  // store's own deadline arrives as ETIMEDOUT, above: ReadDbTimeoutError).
  return (
    error instanceof Error &&
    /Connection terminated|connection timeout|Query read timeout|timeout exceeded when trying to connect/i.test(
      error.message,
    )
  );
}

function answered<T>(query: Promise<T>): Promise<T> {
  return query.catch((error: unknown) => {
    if (error instanceof ReadStoreBehindError) {
      throw new VenueError(
        'unavailable',
        'the history store (orders, trades, finished portfolios) is behind your latest acknowledged commands and is catching up; nothing was changed, it is safe to try again shortly',
        {
          field: 'history',
          reason: 'history_behind',
          safeToRetry: true,
          behindCommands: Math.max(1, error.neededSeq - error.writtenSeq),
        },
      );
    }
    if (isStorageOutage(error)) {
      throw new VenueError(
        'unavailable',
        'the history store (orders, trades, finished portfolios) is not answering; try again shortly',
        {
          field: 'history',
        },
      );
    }
    throw error;
  });
}

export function historyAnsweringOutages(history: HistoryPort): HistoryPort {
  return {
    order: (orderId) => answered(history.order(orderId)),
    orderHistory: (query) => answered(history.orderHistory(query)),
    userTrades: (query) => answered(history.userTrades(query)),
    orderTrades: (query) => answered(history.orderTrades(query)),
    settlements: (query) => answered(history.settlements(query)),
    transactions: (query) => answered(history.transactions(query)),
  };
}

/** The pruned portfolios' records (portfolio `info`) live in the same store, with the same outages. */
export function archiveAnsweringOutages(archive: PortfolioArchive): PortfolioArchive {
  return { portfolio: (portfolioId) => answered(archive.portfolio(portfolioId)) };
}
