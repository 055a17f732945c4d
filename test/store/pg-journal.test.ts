/**
 * The journal contract on the PostgreSQL backend, against a real throwaway server
 * (test/support/postgres.ts); a fresh database per test. Skips, saying why, when PostgreSQL is
 * not installed (run scripts/ensure-system-deps.sh first).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { type BatchLimits, JournalWriteError } from '../../src/store/journal.ts';
import { PgJournal } from '../../src/store/postgres/pg-journal.ts';
import { PgSnapshotStore } from '../../src/store/postgres/pg-snapshots.ts';
import { encodeSnapshot } from '../../src/store/record-format.ts';
import { startPostgres } from '../support/postgres.ts';
import { journalContract, type StoreHarness, type TestCommand } from './journal-contract.ts';

const server = await startPostgres();
after(() => server?.stop());

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Advisory locks granted in the current database of `client`. */
async function advisoryLocks(client: pg.Client): Promise<number> {
  const rows = await client.query(
    "SELECT COUNT(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  );
  return (rows.rows[0] as { n: number }).n;
}

/**
 * Stops (SIGSTOP) the server processes of every other connection to the database at `url`: the
 * server then neither answers them nor drops them. Returns what lets them go on (SIGCONT).
 */
async function stopBackends(url: string): Promise<() => void> {
  const backends = await withClient(url, async (client) => {
    const rows = await client.query(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    );
    return (rows.rows as Array<{ pid: number }>).map((row) => row.pid);
  });
  assert.ok(backends.length > 0, 'the journal has connections to stop');
  for (const pid of backends) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const pid of backends) process.kill(pid, 'SIGCONT');
  };
}

const FLIP_FIRST_BYTE = 'set_byte(payload, 0, get_byte(payload, 0) # 255)';

if (server === null) {
  test('PostgreSQL journal contract', {
    skip: 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)',
  });
} else {
  let databases = 0;
  journalContract('postgres', async (): Promise<StoreHarness> => {
    const url = await server.createDatabase(`journal_${process.pid}_${++databases}`);
    const open: Array<{ close(): Promise<void> }> = [];
    const openJournal = async (limits?: BatchLimits) => {
      const journal = await PgJournal.open<TestCommand>(
        limits ? { connectionString: url, limits } : { connectionString: url },
      );
      open.push(journal);
      return journal;
    };
    return {
      openJournal,
      async openSnapshots(keep) {
        const store = await PgSnapshotStore.open({ connectionString: url, keep: keep ?? 3 });
        open.push(store);
        return store;
      },
      async insertRawFrame(frame) {
        await (await openJournal()).close();
        await withClient(url, (c) =>
          c.query(
            'INSERT INTO journal (first_seq, count, version, payload, checksum) VALUES ($1, $2, $3, $4, $5)',
            [frame.firstSeq, frame.count, frame.version, frame.payload, frame.checksum],
          ),
        );
      },
      async corruptFrame(firstSeq) {
        await withClient(url, (c) =>
          c.query(`UPDATE journal SET payload = ${FLIP_FIRST_BYTE} WHERE first_seq = $1`, [firstSeq]),
        );
      },
      async corruptSnapshot(seq) {
        await withClient(url, (c) =>
          c.query(`UPDATE snapshots SET payload = ${FLIP_FIRST_BYTE} WHERE seq = $1`, [seq]),
        );
      },
      async insertRawSnapshot(snapshot) {
        await withClient(url, (c) =>
          c.query(
            'INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES ($1, $2, $3, $4, $5, $6)',
            [
              snapshot.seq,
              snapshot.ts,
              snapshot.stateHash,
              snapshot.version,
              snapshot.payload,
              snapshot.checksum,
            ],
          ),
        );
      },
      async frameCount() {
        return withClient(url, async (c) =>
          Number((await c.query('SELECT COUNT(*) AS n FROM journal')).rows[0].n),
        );
      },
      async dispose() {
        for (const store of open) await store.close();
      },
    };
  });

  test('latestSnapshot tells onSkipped the seq of each snapshot whose checksum fails', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_skipped_snapshots`);
    const skipped: number[] = [];
    const store = await PgSnapshotStore.open({
      connectionString: url,
      onSkipped: (seq) => skipped.push(seq),
    });
    try {
      for (const seq of [10, 20, 30])
        await store.saveSnapshot({ seq, ts: seq, stateHash: `h${seq}`, state: { seq } });
      // The row's checksum no longer matches its payload.
      await withClient(url, (c) => c.query('UPDATE snapshots SET checksum = checksum # 1 WHERE seq = 30'));
      assert.deepEqual((await store.latestSnapshot(25))?.state, { seq: 20 });
      assert.deepEqual(skipped, [], 'a bound below the damaged row never reads it');
      assert.deepEqual((await store.latestSnapshot())?.state, { seq: 20 });
      assert.deepEqual(skipped, [30]);
      await withClient(url, (c) =>
        c.query(`UPDATE snapshots SET payload = ${FLIP_FIRST_BYTE} WHERE seq = 20`),
      );
      assert.deepEqual((await store.latestSnapshot())?.state, { seq: 10 });
      assert.deepEqual(skipped, [30, 30, 20], 'each read tells every row it passes over, newest first');
    } finally {
      await store.close();
    }
  });

  test('a snapshot table made by an older build gets its pinned column, even by two opens at once', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_old_snapshots`);
    await withClient(url, async (c) => {
      await c.query(`CREATE TABLE snapshots (
        seq BIGINT PRIMARY KEY,
        ts BIGINT NOT NULL,
        state_hash TEXT NOT NULL,
        version INTEGER NOT NULL,
        payload BYTEA NOT NULL,
        checksum INTEGER NOT NULL
      )`);
      for (const seq of [10, 20, 30]) {
        const s = encodeSnapshot(seq, seq * 10, `h${seq}`, { seq });
        await c.query(
          'INSERT INTO snapshots (seq, ts, state_hash, version, payload, checksum) VALUES ($1, $2, $3, $4, $5, $6)',
          [s.seq, s.ts, s.stateHash, s.version, s.payload, s.checksum],
        );
      }
    });
    // The service and its snapshot replica each open the store: both at once.
    const [store, replica] = await Promise.all([
      PgSnapshotStore.open({ connectionString: url, keep: 2 }),
      PgSnapshotStore.open({ connectionString: url, keep: 2 }),
    ]);
    try {
      assert.deepEqual(
        (await store.listSnapshots()).map((s) => [s.seq, s.pinned]),
        [
          [30, false],
          [20, false],
          [10, false],
        ],
      );
      assert.equal(await store.pin(10), true);
      assert.equal(
        (await store.saveSnapshot({ seq: 40, ts: 400, stateHash: 'h40', state: {} })).pinned,
        false,
      );
      assert.deepEqual(
        (await replica.listSnapshots()).map((s) => [s.seq, s.pinned]),
        [
          [40, false],
          [30, false],
          [10, true],
        ],
      );
      assert.deepEqual((await replica.latestSnapshot(15))?.state, { seq: 10 });
    } finally {
      await store.close();
      await replica.close();
    }
  });

  test('a server that stops answering fails the journal after the write timeout, not never', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_stalled`);
    const journal = await PgJournal.open({ connectionString: url, writeTimeoutMs: 500 });
    await journal.append({ seq: 1, ts: 1, command: { type: 'x' } });
    // The writer's own backend process, stopped: the server then neither answers nor drops it.
    const resume = await stopBackends(url);
    try {
      await assert.rejects(journal.append({ seq: 2, ts: 2, command: { type: 'x' } }), /journal write failed/);
      await assert.rejects(
        journal.append({ seq: 3, ts: 3, command: { type: 'x' } }),
        'the journal stays failed',
      );
    } finally {
      resume();
      await journal.close().catch(() => undefined);
    }
  });

  test('one writer per database: a second open is refused until the first closes', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_lock`);
    const first = await PgJournal.open({ connectionString: url });
    await first.append({ seq: 1, ts: 1, command: { type: 'x' } });
    await assert.rejects(
      PgJournal.open({ connectionString: url }),
      (error: unknown) =>
        error instanceof StoreOpenError && /in use by another running service/.test(error.message),
    );
    assert.equal(await first.lastSeq(), 1, 'the running writer is unharmed');
    await first.close();
    const second = await PgJournal.open({ connectionString: url });
    assert.equal(await second.lastSeq(), 1);
    await second.close();
  });

  test('a server with synchronous_commit off is refused, and the refused open leaves the database free', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_async_commit`);
    const name = `journal_${process.pid}_async_commit`;
    await withClient(server.url, (c) => c.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`));
    await assert.rejects(PgJournal.open({ connectionString: url }), /synchronous_commit is off/);
    await withClient(server.url, (c) => c.query(`ALTER DATABASE "${name}" RESET synchronous_commit`));
    const journal = await PgJournal.open({ connectionString: url });
    await journal.close();
  });

  test('an open refused after it took the lock (onLocked fails) has released it when it rejects', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_onlocked`);
    await withClient(url, async (watcher) => {
      for (let i = 0; i < 30; i++) {
        await assert.rejects(
          PgJournal.open({
            connectionString: url,
            onLocked: async () => {
              throw new Error('refused by onLocked');
            },
          }),
          /refused by onLocked/,
        );
        assert.equal(await advisoryLocks(watcher), 0, `try ${i}: the lock is free once open rejected`);
      }
    });
  });

  test('close has released the lock when it resolves', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_closelock`);
    await withClient(url, async (watcher) => {
      for (let i = 0; i < 10; i++) {
        const journal = await PgJournal.open({ connectionString: url });
        assert.equal(await advisoryLocks(watcher), 1, 'held while open');
        await journal.close();
        assert.equal(await advisoryLocks(watcher), 0, `try ${i}: the lock is free once close resolved`);
      }
    });
  });

  test('an append whose batch carries a hash checkpoint resolves only once durable: a stalled write rejects it', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_stalled_checkpoint`);
    const journal = await PgJournal.open({ connectionString: url, writeTimeoutMs: 500 });
    await journal.append({ seq: 1, ts: 1, command: { type: 'x' } });
    const resume = await stopBackends(url);
    try {
      const appended = journal.append({ seq: 2, ts: 2, command: { type: 'x' } });
      journal.recordCheckpoint({ seq: 2, stateHash: 'h2' });
      await assert.rejects(appended, /journal write failed/);
    } finally {
      resume();
      await journal.close().catch(() => undefined);
    }
  });

  test('a hash checkpoint recorded with no append pending is stored on its own', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_lone_checkpoint`);
    const journal = await PgJournal.open({ connectionString: url });
    try {
      for (const seq of [1, 2, 3]) await journal.append({ seq, ts: seq, command: { type: 'x' } });
      journal.recordCheckpoint({ seq: 3, stateHash: 'h3' });
      await journal.flush();
      assert.deepEqual(await journal.checkpoints(1, 3), [{ seq: 3, stateHash: 'h3' }]);
    } finally {
      await journal.close();
    }
  });

  test('reopening keeps the checkpoints up to the last durable seq, that one included, and drops those past it', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_checkpoints_reopen`);
    const journal = await PgJournal.open({ connectionString: url });
    const appended = Promise.all(
      Array.from({ length: 10 }, (_, i) => journal.append({ seq: i + 1, ts: i + 1, command: { type: 'x' } })),
    );
    journal.recordCheckpoint({ seq: 5, stateHash: 'h5' });
    journal.recordCheckpoint({ seq: 10, stateHash: 'h10' });
    await appended;
    await journal.flush();
    await journal.close();
    // A checkpoint that went out with an earlier batch than its own entries, which never became durable.
    await withClient(url, (c) =>
      c.query("INSERT INTO hash_checkpoints (seq, state_hash) VALUES (12, 'h12')"),
    );
    const reopened = await PgJournal.open({ connectionString: url });
    try {
      assert.equal(await reopened.lastSeq(), 10);
      assert.deepEqual(await reopened.checkpoints(1, 100), [
        { seq: 5, stateHash: 'h5' },
        { seq: 10, stateHash: 'h10' },
      ]);
    } finally {
      await reopened.close();
    }
  });

  test('close flushes: appends still pending when close is called become durable first', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_close_flushes`);
    const journal = await PgJournal.open({ connectionString: url });
    const appended = [1, 2, 3].map((seq) => journal.append({ seq, ts: seq, command: { type: 'x' } }));
    await journal.close();
    const outcomes = await Promise.allSettled(appended);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
    );
    const reopened = await PgJournal.open({ connectionString: url });
    try {
      assert.equal(await reopened.lastSeq(), 3);
    } finally {
      await reopened.close();
    }
  });

  test('a trim on a server that stops answering fails after the write timeout, not never', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_stalled_trim`);
    const journal = await PgJournal.open({
      connectionString: url,
      writeTimeoutMs: 500,
      limits: { maxEntries: 1 },
    });
    for (const seq of [1, 2, 3]) await journal.append({ seq, ts: seq, command: { type: 'x' } });
    const resume = await stopBackends(url);
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), 20_000);
      });
      const outcome = await Promise.race([
        journal.trimThrough(2, 10).then(
          () => 'trimmed',
          (error: unknown) => error,
        ),
        late,
      ]);
      assert.ok(outcome instanceof JournalWriteError, `the trim ended as: ${String(outcome)}`);
    } finally {
      clearTimeout(timer);
      resume();
      await journal.close().catch(() => undefined);
    }
  });

  test('discardAfter keeps the snapshot at its seq; a snapshot just below a damaged one is used', async () => {
    const url = await server.createDatabase(`journal_${process.pid}_snapshot_edges`);
    const store = await PgSnapshotStore.open({ connectionString: url, keep: 5 });
    try {
      for (const seq of [10, 11, 20])
        await store.saveSnapshot({ seq, ts: seq, stateHash: `h${seq}`, state: { seq } });
      assert.equal(await store.discardAfter(20), 0, 'the snapshot at the last durable seq stays');
      assert.equal(await store.discardAfter(19), 1);
      assert.deepEqual(
        (await store.listSnapshots()).map((s) => s.seq),
        [11, 10],
      );
      await withClient(url, (c) => c.query('UPDATE snapshots SET checksum = checksum # 1 WHERE seq = 11'));
      assert.deepEqual((await store.latestSnapshot())?.state, { seq: 10 }, 'seq 10, right below 11');
    } finally {
      await store.close();
    }
  });
}
