/**
 * A PostgreSQL server that stops answering, for tests: every process of the test's own server
 * (its postmaster, found as the parent of a backend of a connection to `url`, and the
 * postmaster's children) gets SIGSTOP, so connections stay open and nothing answers, new
 * connections included, as with a server whose machine or disk hung; `resume` sends SIGCONT.
 * Only processes of the server at `url` are touched; they are resumed too if the test process
 * exits first, so the server can still be stopped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** The parent pid of `pid` (/proc/<pid>/stat: the field after the parenthesised command name). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

export interface FrozenPostgres {
  /** SIGCONT to every process stopped; idempotent. */
  resume(): void;
}

export async function freezePostgres(url: string): Promise<FrozenPostgres> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let backend: number;
  let postmaster: number | null;
  try {
    backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    // While the backend still runs: it exits once the connection ends.
    postmaster = parentOf(backend);
  } finally {
    await client.end();
  }
  if (postmaster === null || postmaster <= 1) throw new Error(`no postmaster found for backend ${backend}`);
  // The postmaster first: it then starts no new process while its children are found.
  process.kill(postmaster, 'SIGSTOP');
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => parentOf(pid) === postmaster);
  const stopped = [postmaster, ...children];
  for (const pid of children) process.kill(pid, 'SIGSTOP');
  let resumed = false;
  const resume = () => {
    if (resumed) return;
    resumed = true;
    process.removeListener('exit', resume);
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
  };
  process.once('exit', resume);
  return { resume };
}
