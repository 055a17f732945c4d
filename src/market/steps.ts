/**
 * Work done in small steps, so a caller on the event loop can spread it over several turns.
 *
 * A `Steps<T>` is a generator: each `next()` does a bounded piece of the work (tens to hundreds
 * of µs) and the generator returns the result. Where the work pauses never changes what it
 * computes: `runToEnd` (all at once) and `runInTurns` (a time budget per event-loop turn) give
 * the same result for the same inputs; only what else runs between turns (users' commands) can
 * differ, as it could between ticks.
 *
 * A step that cannot be split (a query of the venue that costs milliseconds) is announced by
 * yielding `LONG_STEP` just before it: the runner then starts it on a fresh turn, so the turn
 * lasts that step alone instead of the budget plus that step.
 */

/** Yielded just before a step that takes about a turn's budget or more on its own. */
export const LONG_STEP = 'long_step';

export type Steps<T> = Generator<typeof LONG_STEP | undefined, T, void>;

/** Runs every step now and returns the result. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

export interface TurnOptions {
  /** A turn ends after the step that takes it to this many ms (so it lasts budget + ≤ 1 step). */
  readonly budgetMs: number;
  /** Monotonic ms (performance.now; a counter in tests). */
  readonly now: () => number;
  /** Lets the event loop run (setImmediate in the service; a counter in tests). */
  readonly yieldTurn: () => Promise<void>;
  /** Called with each turn's duration in ms, the last one included. */
  readonly onTurn?: (ms: number) => void;
}

/**
 * Runs the steps in turns of about `budgetMs` (a turn ends after the step that reaches it, or
 * before a `LONG_STEP`), yielding to the event loop between them.
 */
export async function runInTurns<T>(steps: Steps<T>, options: TurnOptions): Promise<T> {
  const { budgetMs, now, yieldTurn, onTurn } = options;
  let turnStart = now();
  for (;;) {
    const next = steps.next();
    const elapsed = now() - turnStart;
    if (next.done) {
      onTurn?.(elapsed);
      return next.value;
    }
    if (elapsed >= budgetMs || next.value === LONG_STEP) {
      onTurn?.(elapsed);
      await yieldTurn();
      turnStart = now();
    }
  }
}

/** setImmediate as a promise: lets I/O (requests) run before the next turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
