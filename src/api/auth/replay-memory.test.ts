import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fingerprintOf, ReplayMemory, type ReplayMemoryLimits } from './replay-memory.ts';

const SKEW = 15_000;
const T0 = 1_700_000_000_000;

function memory(limits: ReplayMemoryLimits = { maxEntries: 1_000, maxAnswerBytes: 1_000 }) {
  const replay = new ReplayMemory(SKEW, limits);
  replay.prune(T0);
  return replay;
}

test('a kept answer is replayed to a byte-identical retry, waiting while it is in flight', async () => {
  const replay = memory();
  const settle = replay.remember('k', 'n', T0 + SKEW + 1, 'sigA', 'answer');
  const early = replay.lookup('k', 'n', 'sigA');
  assert.equal(early.kind, 'replay');
  settle({ status: 200, body: 'first' });
  settle({ status: 500, body: 'ignored: an answer is settled once' });
  if (early.kind === 'replay') assert.deepEqual(await early.answer, { status: 200, body: 'first' });
  const late = replay.lookup('k', 'n', 'sigA');
  if (late.kind !== 'replay') assert.fail('expected replay');
  assert.deepEqual(await late.answer, { status: 200, body: 'first' });
  assert.equal(replay.lookup('k', 'n', 'sigB').kind, 'conflict');
  assert.equal(replay.lookup('other-key', 'n', 'sigA').kind, 'absent');
  assert.equal(replay.answerBytes, 'first'.length);
});

test('a fingerprint-only nonce asks for a rerun on a byte-identical retry, conflicts otherwise', () => {
  const replay = memory();
  const signature = 'QUJDRE'.padEnd(44, 'x');
  replay.remember('k', 'n', T0 + SKEW + 1, signature, 'fingerprint')({ status: 200, body: 'not kept' });
  assert.equal(replay.answerBytes, 0);
  assert.equal(replay.lookup('k', 'n', signature).kind, 'rerun');
  assert.equal(replay.lookup('k', 'n', 'zzzzz'.padEnd(44, 'x')).kind, 'conflict');
  assert.equal(fingerprintOf('AAAAB'), 1);
  assert.equal(fingerprintOf('/////'), 2 ** 30 - 1);
});

test('a session nonce conflicts with every request', () => {
  const replay = memory();
  replay.rememberSession('k', 'w', T0 + SKEW + 1);
  assert.ok(replay.has('k', 'w'));
  assert.equal(replay.lookup('k', 'w', 'AAAAA').kind, 'conflict');
});

test('nonces are forgotten after their expiry, never before, within one bucket of it', () => {
  const replay = memory();
  const expiresAt = T0 + SKEW + 1;
  replay.remember('k', 'n', expiresAt, 'sig', 'answer')({ status: 200, body: 'abc' });
  replay.prune(expiresAt);
  assert.ok(replay.has('k', 'n'), 'kept at its expiry instant');
  replay.prune(expiresAt + replay.bucketMs);
  assert.ok(!replay.has('k', 'n'), 'gone one bucket later');
  assert.equal(replay.entries, 0);
  assert.equal(replay.answerBytes, 0);
});

test('expiry follows timestamps, not arrival order, and a long clock jump clears everything', () => {
  const replay = memory();
  replay.remember('k', 'late', T0 + 2 * SKEW + 1, 'a', 'fingerprint'); // client clock ahead
  replay.remember('k', 'early', T0 + 1, 'b', 'fingerprint'); // client clock behind
  replay.prune(T0 + 1_000);
  assert.ok(!replay.has('k', 'early'), 'not held up behind the later expiry');
  assert.ok(replay.has('k', 'late'));
  replay.prune(T0 + 3_600_000);
  assert.equal(replay.entries, 0);
  replay.remember('k', 'again', T0 + 3_600_000 + SKEW, 'c', 'fingerprint');
  replay.prune(T0 + 3_600_000 + SKEW - 1_000);
  assert.ok(replay.has('k', 'again'), 'the ring still works after the jump');
});

test('full at maxEntries or maxAnswerBytes, and free again as nonces expire', () => {
  const replay = memory({ maxEntries: 2, maxAnswerBytes: 10 });
  replay.remember('k', 'a', T0 + 1, 'a', 'fingerprint');
  assert.equal(replay.full, false);
  replay.remember('k', 'b', T0 + 1, 'b', 'fingerprint');
  assert.equal(replay.full, true);
  replay.prune(T0 + 1_000);
  assert.equal(replay.full, false);
  const settle = replay.remember('k', 'c', T0 + 2_000, 'c', 'answer');
  assert.equal(replay.full, false, 'an answer in flight counts only as an entry');
  settle({ status: 200, body: '0123456789' });
  assert.equal(replay.full, true);
});

test('an answer settled after its nonce expired is not counted', () => {
  const replay = memory();
  const settle = replay.remember('k', 'slow', T0 + 1, 'sig', 'answer');
  replay.prune(T0 + 1_000);
  settle({ status: 200, body: 'late answer' });
  assert.equal(replay.answerBytes, 0);
});

test('save and restore: answers (text and bytes), fingerprints, sessions and unsettled requests survive; expired ones do not', async () => {
  const before = memory();
  before.remember('k', 'text', T0 + SKEW + 1, 'sigT', 'answer')({ status: 200, body: 'first' });
  before.remember(
    'k',
    'bytes',
    T0 + 5_000,
    'sigB',
    'answer',
  )({ status: 401, body: Buffer.from([0, 1, 255]) });
  const unsettled = before.remember('k2', 'open', T0 + SKEW + 1, 'sigO', 'answer');
  const signature = 'QUJDRE'.padEnd(44, 'x');
  before.remember('k', 'public', T0 + SKEW + 1, signature, 'fingerprint');
  before.rememberSession('k', 'session', T0 + SKEW + 1);
  before.remember('k', 'soon', T0 + 1_000, 'sigS', 'answer')({ status: 200, body: 'gone' });
  const saved = JSON.parse(JSON.stringify(before.save()));
  unsettled({ status: 200, body: 'answered after the save' });

  const after = memory();
  after.restore(saved, T0 + 2_000);
  assert.equal(after.entries, 5, 'the nonce expired by then is dropped');
  const text = after.lookup('k', 'text', 'sigT');
  if (text.kind !== 'replay') assert.fail('expected replay');
  assert.deepEqual(await text.answer, { status: 200, body: 'first' });
  const bytes = after.lookup('k', 'bytes', 'sigB');
  if (bytes.kind !== 'replay') assert.fail('expected replay');
  assert.deepEqual(await bytes.answer, { status: 401, body: Buffer.from([0, 1, 255]) });
  assert.equal(after.answerBytes, 'first'.length + 3);
  assert.equal(after.lookup('k', 'text', 'sigX').kind, 'conflict');
  assert.equal(after.lookup('k2', 'open', 'sigO').kind, 'unknown', 'never run again, answer unknown');
  assert.equal(after.lookup('k2', 'open', 'sigX').kind, 'conflict');
  assert.equal(after.lookup('k', 'public', signature).kind, 'rerun');
  assert.equal(after.lookup('k', 'session', 'any').kind, 'conflict');
  assert.equal(after.has('k', 'soon'), false);
  // Restored nonces still expire on time, never early.
  after.prune(T0 + 5_000);
  assert.equal(after.has('k', 'bytes'), true);
  after.prune(T0 + SKEW + 1 + after.bucketMs);
  assert.equal(after.entries, 0);
  assert.equal(after.answerBytes, 0);
});

test('a key over its share is full once the memory is half full; the others get in up to their share or the cap', () => {
  const replay = memory({ maxEntries: 8, maxAnswerBytes: 1_000, maxEntriesPerKey: 2 });
  for (const nonce of ['a', 'b', 'c']) replay.remember('hog', nonce, T0 + 1, nonce, 'fingerprint');
  assert.equal(replay.fullFor('hog'), false, 'below half full no key is held to its share');
  replay.remember('hog', 'd', T0 + 1, 'd', 'fingerprint');
  assert.equal(replay.fullFor('hog'), true);
  assert.equal(replay.full, false);
  assert.equal(replay.fullFor('other'), false);
  replay.remember('other', 'a', T0 + 2_000, 'a', 'fingerprint');
  assert.equal(replay.fullFor('other'), false, 'within its share');
  replay.remember('other', 'b', T0 + 2_000, 'b', 'fingerprint');
  assert.equal(replay.fullFor('other'), true, 'at its share while the memory is pressed');
  assert.deepEqual(replay.heldBy('hog'), { entries: 4, answerBytes: 0 });
  // The hog's nonces expire: the memory is no longer pressed, nobody is held to a share.
  replay.prune(T0 + 1_000);
  assert.equal(replay.fullFor('hog'), false);
  assert.equal(replay.fullFor('other'), false);
  assert.deepEqual(replay.heldBy('hog'), { entries: 0, answerBytes: 0 });
});

test('answer bytes are counted per key too, and forgotten with their nonces', () => {
  const replay = memory({ maxEntries: 1_000, maxAnswerBytes: 100, maxAnswerBytesPerKey: 10 });
  replay.remember('hog', 'a', T0 + 1, 'a', 'answer')({ status: 200, body: 'x'.repeat(30) });
  assert.equal(replay.fullFor('hog'), false, 'less than half of the bytes');
  replay.remember('hog', 'b', T0 + 1, 'b', 'answer')({ status: 200, body: Buffer.alloc(20) });
  assert.deepEqual(replay.heldBy('hog'), { entries: 2, answerBytes: 50 });
  assert.equal(replay.fullFor('hog'), true);
  assert.equal(replay.fullFor('other'), false);
  replay.remember('other', 'a', T0 + 2_000, 'a', 'answer')({ status: 200, body: 'y'.repeat(10) });
  assert.equal(replay.fullFor('other'), true);
  replay.prune(T0 + 1_000);
  assert.deepEqual(replay.heldBy('hog'), { entries: 0, answerBytes: 0 });
  assert.equal(replay.answerBytes, 10);
  assert.equal(replay.fullFor('other'), false);
});

test('a key’s default share is a sixteenth of each cap', () => {
  const replay = new ReplayMemory(SKEW);
  assert.equal(replay.maxEntriesPerKey, 62_500);
  assert.equal(replay.maxAnswerBytesPerKey, 16_777_216);
  const explicit = new ReplayMemory(SKEW, { maxEntries: 100, maxAnswerBytes: 100, maxEntriesPerKey: 7 });
  assert.equal(explicit.maxEntriesPerKey, 7);
  assert.equal(explicit.maxAnswerBytesPerKey, 7);
});

test('nonces are compared without regard to case, saved and restored so too', () => {
  const replay = memory();
  const nonce = '0000000a-0000-4000-8000-00000000abcd';
  replay.remember('k', nonce.toUpperCase(), T0 + SKEW + 1, 'sig', 'answer');
  assert.ok(replay.has('k', nonce));
  assert.equal(replay.lookup('k', nonce, 'other').kind, 'conflict');
  assert.equal(replay.lookup('k', nonce, 'sig').kind, 'replay');
  replay.rememberSession('k', nonce.replace('a', 'b'), T0 + SKEW + 1);
  assert.ok(replay.has('k', nonce.replace('a', 'b').toUpperCase()));
  const restored = memory();
  restored.restore([{ apiKey: 'k', nonce: nonce.toUpperCase(), expiresAt: T0 + SKEW + 1, value: 5 }], T0);
  assert.equal(restored.lookup('k', nonce, 'x').kind, 'conflict');
  assert.equal(replay.save()[0]?.nonce, nonce);
});

test('a nonce restored within its last bucket is still remembered until that bucket ends', () => {
  const before = memory();
  // Expires in the middle of a bucket; the restart comes just before that instant.
  const expiresAt = T0 + SKEW + 50;
  before.remember('k', 'late', expiresAt, 'sigL', 'answer')({ status: 200, body: 'x' });
  before.rememberSession('k', 'session', expiresAt);
  const saved = JSON.parse(JSON.stringify(before.save()));
  const after = new ReplayMemory(SKEW, { maxEntries: 1_000, maxAnswerBytes: 1_000 });
  after.restore(saved, expiresAt - 10);
  assert.equal(after.has('k', 'late'), true, 'never forgotten before its expiry');
  assert.equal(after.has('k', 'session'), true);
  after.prune(expiresAt);
  assert.equal(after.lookup('k', 'late', 'sigL').kind, 'replay');
});

test('nonces restored past the span of a clock behind the saved run are kept until they expire, and saved again', async () => {
  const before = memory();
  // Signed 15 s ahead of the stopped run's clock: remembered until T0 + 30 s.
  const expiresAt = T0 + 2 * SKEW + 1;
  before.remember('k', 'ahead', expiresAt, 'sigA', 'answer')({ status: 200, body: 'placed' });
  const saved = JSON.parse(JSON.stringify(before.save()));
  // The restart's clock starts 20 s behind the stop.
  const after = new ReplayMemory(SKEW, { maxEntries: 1_000, maxAnswerBytes: 1_000 });
  after.restore(saved, T0 - 20_000);
  for (const now of [T0 - 10_000, T0, T0 + SKEW, expiresAt - 1]) {
    after.prune(now);
    assert.equal(after.has('k', 'ahead'), true, `remembered at ${now - T0} ms`);
  }
  const again = new ReplayMemory(SKEW, { maxEntries: 1_000, maxAnswerBytes: 1_000 });
  const resaved = JSON.parse(JSON.stringify(after.save()));
  assert.deepEqual(
    resaved.map((entry: { nonce: string }) => entry.nonce),
    ['ahead'],
    'saved again',
  );
  again.restore(resaved, expiresAt - 1);
  const replay = again.lookup('k', 'ahead', 'sigA');
  if (replay.kind !== 'replay') assert.fail(`a byte-identical retry got ${replay.kind}`);
  assert.deepEqual(await replay.answer, { status: 200, body: 'placed' });
  after.prune(expiresAt + 100);
  assert.equal(after.has('k', 'ahead'), false, 'forgotten once its bucket ended');
  assert.equal(after.entries, 0);
});
