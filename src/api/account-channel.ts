/**
 * `user.portfolio.{currency}` (Deribit's name): the key's default account's summary in one
 * currency, as `private/get_account_summary` answers it: a snapshot, then the summary again each
 * time what it shows changes. Pushes render the state when they are published (never older than
 * the snapshot). A summary is re-read when a committed command touches the account in the
 * currency (a balance, a position settled in it, an order on an instrument filed under it, the
 * account's settings), and, as equity and margins move with the marks (`update_prices` has no
 * events), once a second of batch time; it is pushed only when it differs from the one last
 * pushed. Marks alone so push a summary at most once a second, and a price tick does not re-read
 * every subscribed account's summary.
 */
import type { CoreEvent } from '../core/events.ts';
import { ALL_INTERVALS, type ChannelFamily, requirePrincipal, topicFor } from './channels.ts';
import type { ReadPort } from './ports.ts';
import { AccountSummarySchema } from './schemas/objects.ts';
import { accountSummaryToWire } from './wire/market.ts';

/** How often the watched summaries are compared with the prices (ms of batch time). */
const PRICE_CHECK_MS = 1_000;
const PREFIX = 'user.portfolio.';

interface Watched {
  readonly accountId: number;
  readonly currency: string;
  /** What every subscriber was last shown (JSON), or undefined when they may disagree. */
  shown: string | undefined;
}

export function accountChannel(reads: ReadPort): ChannelFamily {
  const watched = new Map<string, Watched>();
  let lastPriceCheck = Number.NEGATIVE_INFINITY;
  const keyOf = (accountId: number, currency: string) => `${accountId}|${currency}`;
  const render = (accountId: number, currency: string) => {
    const summary = reads.accountSummary(accountId, currency);
    return summary === undefined ? null : accountSummaryToWire(summary);
  };
  /** The (account, currency) pairs a committed event may have changed the summary of. */
  const touches = (event: CoreEvent, touched: Set<string>, settingsOf: Set<number>) => {
    if (event.type === 'balance') touched.add(keyOf(event.accountId, event.currency));
    else if (event.type === 'position')
      touched.add(keyOf(event.position.accountId, event.position.settlementCurrency));
    else if (event.type === 'order') {
      const instrument = reads.instrument(event.order.instrumentName);
      if (instrument === undefined) return;
      for (const currency of instrument.currencies) touched.add(keyOf(event.order.accountId, currency));
      touched.add(keyOf(event.order.accountId, instrument.spec.settlementCurrency));
    } else if (event.type === 'account') settingsOf.add(event.accountId);
  };
  return {
    pattern: 'user.portfolio.{currency}',
    summary:
      "The key's account's summary in one currency, as get_account_summary answers it, pushed when it changes (with the marks too).",
    access: 'private',
    payload: AccountSummarySchema,
    snapshotPayload: AccountSummarySchema,
    intervals: ALL_INTERVALS,
    resolve(name, principal) {
      if (!name.startsWith(PREFIX)) return null;
      const currency = name.slice(PREFIX.length).toUpperCase();
      if (!reads.currencies().includes(currency)) return null;
      const accountId = requirePrincipal(principal, name).defaultAccountId;
      const canonical = `${PREFIX}${currency}`;
      return {
        channel: canonical,
        topics: [topicFor(canonical, accountId)],
        pushesCurrentState: true,
        snapshot: () => {
          const data = render(accountId, currency);
          const shown = JSON.stringify(data);
          const key = keyOf(accountId, currency);
          const entry = watched.get(key);
          if (entry === undefined) watched.set(key, { accountId, currency, shown });
          else if (entry.shown !== shown) entry.shown = undefined;
          return data;
        },
      };
    },
    produce(batch, emit, held) {
      if (watched.size === 0) return;
      const touched = new Set<string>();
      const settingsOf = new Set<number>();
      for (const event of batch.events) touches(event, touched, settingsOf);
      const everyone = batch.ts >= lastPriceCheck + PRICE_CHECK_MS;
      if (everyone) lastPriceCheck = batch.ts;
      for (const [key, entry] of watched) {
        if (!everyone && !touched.has(key) && !settingsOf.has(entry.accountId)) continue;
        const channel = `${PREFIX}${entry.currency}`;
        if (!held(channel, entry.accountId)) {
          watched.delete(key);
          continue;
        }
        const data = render(entry.accountId, entry.currency);
        const shown = JSON.stringify(data);
        if (entry.shown === shown) continue;
        entry.shown = shown;
        emit(channel, entry.accountId, () => data);
      }
    },
  };
}
