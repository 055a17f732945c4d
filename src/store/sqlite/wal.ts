/**
 * The WAL settings every SQLite store of the service opens its connections with.
 *
 * Why checkpoints of 256 pages (1 MiB) instead of SQLite's 1,000 or the journal's former 4,000:
 * the journal's commit that crosses the limit copies the whole WAL into the database and fsyncs
 * it before it returns, and the read store's and snapshot store's checkpoints put megabytes on
 * the same disk that the journal's next fsync then waits behind. On these machines a 16 MiB
 * journal checkpoint held a commit for 25–125 ms and a 4 MiB read-store checkpoint held the
 * journal's fsyncs for 8–13 ms, which set the p99 of every request around them. Small
 * checkpoints cost a few ms each and no throughput (docs/benchmarks.md, 2026-11-26).
 */
export const WAL_CHECKPOINT_PAGES = 256;

/**
 * `FULL` fsyncs the WAL at every commit (durable across power loss); `NORMAL` only at checkpoints
 * (consistent after power loss, may lose the last commits: for derived data).
 */
export function walPragmas(synchronous: 'FULL' | 'NORMAL'): readonly string[] {
  return [
    'journal_mode = WAL',
    `synchronous = ${synchronous}`,
    `wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`,
  ];
}
