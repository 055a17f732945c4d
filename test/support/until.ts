/**
 * Waits, turn by turn of the event loop, until `predicate` holds: for effects that arrive over
 * real sockets, where there is no event to await. Fails after `timeoutMs`.
 */
export function until(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (predicate()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error('condition not met in time'));
      setImmediate(check);
    };
    check();
  });
}
