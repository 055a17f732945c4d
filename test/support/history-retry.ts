/**
 * Asks `query` again while the service answers that its history store is still behind the
 * caller's acknowledged commands (`unavailable`, `reason: history_behind`, safe to retry), as a
 * client should: a restarted service's store catches up from the journal, which on a loaded
 * machine can take longer than one query's wait. Gives up after `boundMs` of real time.
 */
import { ApiError } from '../../sdk/errors.ts';

export async function retryWhileHistoryBehind<T>(query: () => Promise<T>, boundMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await query();
    } catch (error) {
      const behind = error instanceof ApiError && error.data?.reason === 'history_behind';
      if (!behind || Date.now() - started > boundMs) throw error;
      // Each refusal already waited for the store (HISTORY_WAIT_MS); this pause only bounds the rate.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
