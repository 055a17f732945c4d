/**
 * How long the oldest command not yet durable has waited, for /health (service.ts).
 */
import type { Clock } from './clock.ts';
import type { AppendOnlyJournal, JournalEntry as StampedEntry } from './sequencer.ts';

/** /health answers 503 once the oldest command not yet durable has waited longer than this. */
export const JOURNAL_STALL_MS = 5_000;

/**
 * The journal as the core appends to it, counting since when the oldest unacknowledged batch
 * has waited, for /health: from the append that found nothing waiting, or from the last commit
 * that left more waiting (the next batch was then under way). A comparison per append and a
 * clock read per commit; nothing is asked of the store.
 */
export class JournalWaits<C> implements AppendOnlyJournal<C> {
  private lastAppended: number;
  private since: number | null = null;

  constructor(
    private readonly journal: AppendOnlyJournal<C>,
    private readonly clock: Clock,
    startSeq: number,
  ) {
    this.lastAppended = startSeq;
  }

  append(entry: StampedEntry<C>): Promise<void> {
    this.lastAppended = entry.seq;
    if (this.since === null) this.since = this.clock.now();
    return this.journal.append(entry);
  }

  /** The command at `seq` is durable (called in seq order). */
  committed(seq: number): void {
    this.since = seq >= this.lastAppended ? null : this.clock.now();
  }

  /** How long the oldest command not yet durable has waited, ms (0: none waits). */
  waitedMs(): number {
    return this.since === null ? 0 : Math.max(0, this.clock.now() - this.since);
  }
}
