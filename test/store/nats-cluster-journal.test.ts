/**
 * The NATS journal on a stream with 3 replicas, on a real 3-server JetStream cluster on loopback
 * (test/support/nats.ts): the servers holding the stream's leader are killed one after another
 * (SIGKILL, then started again) while appends run, as an operator's cluster loses a machine.
 * Every append resolves (none fails the journal, which would stop the service), the stream then
 * holds each acknowledged entry exactly once and in order, and trims go on after the failovers.
 * Skips, saying why, when nats-server is not installed (never under CI=true).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { JournalEntry } from '../../src/store/journal.ts';
import { NatsJournal, NatsJournalStream, type NatsJournalTarget } from '../../src/store/nats/nats-journal.ts';
import { startNatsCluster } from '../support/nats.ts';
import type { TestCommand } from './journal-contract.ts';

const cluster = await startNatsCluster(3);
after(() => cluster?.stop());

async function streamLeader(probe: NatsJournalStream): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const leader = await probe.jsm.streams
      .info(probe.stream)
      .then((info) => info.cluster?.leader)
      .catch(() => undefined);
    if (leader !== undefined && leader !== '') return leader;
    if (Date.now() > deadline) throw new Error('the journal stream has no leader after 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function untilEveryReplicaIsCurrent(probe: NatsJournalStream): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const cluster = await probe.jsm.streams
      .info(probe.stream)
      .then((info) => info.cluster)
      .catch(() => undefined);
    const replicas = cluster?.replicas ?? [];
    if (cluster?.leader && replicas.length === 2 && replicas.every((r) => r.current && !r.offline)) return;
    if (Date.now() > deadline)
      throw new Error(`the stream's replicas did not catch up: ${JSON.stringify(cluster)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An error with its causes, for a failure message. */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let e = error; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    parts.push(
      e instanceof Error ? `${e.name}: ${e.message} (${(e as { code?: string }).code ?? ''})` : String(e),
    );
  }
  return parts.join(' ← ');
}

function entry(seq: number): JournalEntry<TestCommand> {
  return { seq, ts: 1_000 + seq, command: { type: 'noop', n: seq } };
}

test('a journal on 3 replicas rides through the loss of its stream leader, storing each entry once', {
  skip: cluster === null ? 'nats-server is not installed' : false,
  timeout: 180_000,
}, async () => {
  const target: NatsJournalTarget = { servers: cluster!.url, stream: `R3_${process.pid}`, replicas: 3 };
  const journal = await NatsJournal.open<TestCommand>(target);
  const probe = await NatsJournalStream.connect(target, 'test probe');
  try {
    // Appends as the sequencer makes them: many in flight, each awaited by its request.
    let next = 1;
    let acknowledged = 0;
    const failures: unknown[] = [];
    let appending = true;
    const inFlight = new Set<Promise<void>>();
    const writer = (async () => {
      while (appending && failures.length === 0) {
        const seq = next++;
        const append = journal.append(entry(seq)).then(
          () => {
            acknowledged += 1;
          },
          (error: unknown) => {
            failures.push(error);
          },
        );
        inFlight.add(append);
        void append.finally(() => inFlight.delete(append));
        if (inFlight.size >= 64) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
    })();
    const until = async (count: number) => {
      while (acknowledged < count && failures.length === 0) await new Promise((r) => setTimeout(r, 20));
    };

    const killed: string[] = [];
    for (let round = 0; round < 2; round++) {
      await until(acknowledged + 500);
      const leader = await streamLeader(probe);
      killed.push(leader);
      const member = cluster!.member(leader);
      await member.kill();
      const before = acknowledged;
      await until(before + 200);
      assert.equal(
        failures.length,
        0,
        `an append failed after ${leader} was killed: ${describeError(failures[0])}`,
      );
      await member.restart();
      // One machine at a time: the next loss comes once the restarted one has caught up.
      await untilEveryReplicaIsCurrent(probe);
    }
    await until(acknowledged + 500);
    appending = false;
    await writer;
    assert.deepEqual(failures, []);
    const last = next - 1;
    assert.equal(acknowledged, last, 'every append acknowledged');
    assert.notEqual(killed[0], undefined);

    // Trims go on on the new leader.
    const trimmed = await journal.trimThrough(1_000, 1_000_000);
    assert.ok(trimmed.entries > 0 && trimmed.entries <= 1_000, `trimmed ${trimmed.entries}`);
    const first = await journal.firstSeq();
    assert.equal(first, trimmed.entries + 1, 'the journal starts after what was trimmed');

    // Every acknowledged entry, once, in order, from the first kept.
    const seqs: number[] = [];
    for await (const batch of journal.readBatches(0)) {
      for (const read of batch) {
        assert.deepEqual(read, entry(read.seq));
        seqs.push(read.seq);
      }
    }
    assert.equal(seqs.length, last - first + 1, 'each kept entry once');
    assert.equal(seqs[0], first, 'read from the first kept');
    assert.equal(seqs.at(-1), last, 'read to the last');
    const info = await probe.jsm.streams.info(target.stream);
    assert.equal(info.config.num_replicas, 3, 'replicas');
  } finally {
    await probe.close();
    await journal.close();
  }
});

test('opening waits for a cluster that lost its quorum to get it back', {
  skip: cluster === null ? 'nats-server is not installed' : false,
  timeout: 120_000,
}, async () => {
  const target: NatsJournalTarget = {
    servers: cluster!.url,
    stream: `R3_QUORUM_${process.pid}`,
    replicas: 3,
  };
  const [, second, third] = cluster!.members;
  await second!.kill();
  await third!.kill();
  const started = Date.now();
  let openedAt = 0;
  const opening = NatsJournal.open<TestCommand>(target).then((journal) => {
    openedAt = Date.now();
    return journal;
  });
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(openedAt, 0, 'no stream can be made without a quorum');
  const backAt = Date.now();
  // A quorum is back with the second; placing 3 replicas may wait for the third.
  await second!.restart();
  await third!.restart();
  const journal = await opening;
  try {
    assert.ok(
      openedAt >= backAt,
      `opened ${openedAt - started} ms after the start, servers back at ${backAt - started}`,
    );
    await journal.append(entry(1));
    assert.equal(await journal.firstSeq(), 1);
  } finally {
    await journal.close();
  }
});
