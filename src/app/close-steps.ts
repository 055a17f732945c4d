/**
 * Bounds on the steps of a service stop that wait on the stores (service.ts `close`): a store
 * that stopped answering must not hold the stop for ever.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';

const LATE = Symbol('late');

/**
 * Waits for a close step for up to `ms` on `clock`, past which the step is logged and left to
 * finish (or not) on its own. Resolves whether it ended in time (true; also for no step); its
 * failure still fails the close when it comes in time.
 */
export function closeStepBound(
  clock: Clock,
  ms: number,
  log: Logger,
  when: string,
): (what: string, step: Promise<unknown> | undefined) => Promise<boolean> {
  return async (what, step) => {
    if (step === undefined) return true;
    let cancel: () => void = () => undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      cancel = clock.schedule(clock.now() + ms, () => resolve(LATE));
    });
    try {
      if ((await Promise.race([step, late])) !== LATE) return true;
      log.error(
        { step: what, waitedMs: ms },
        `${when}: a step did not finish in time and is left behind (a store that stopped answering?); the next start recovers from the journal`,
      );
      // Its eventual failure is not the close's any more.
      step.catch(() => undefined);
      return false;
    } finally {
      cancel();
    }
  };
}
