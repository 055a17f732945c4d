import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { T0 } from '../engine/testkit.ts';
import { VirtualClock } from './clock.ts';
import { closeStepBound } from './close-steps.ts';

/** A logger that keeps the messages of its error lines. */
function recordingLog() {
  const lines: { step: string; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: pino({ level: 'error' }, sink), lines };
}

/** Lets pending promise reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('a step that ends within its bound on the service clock is in time; its failure fails the close', async () => {
  const clock = new VirtualClock(T0);
  const { log, lines } = recordingLog();
  const within = closeStepBound(clock, 5_000, log, 'stopping');
  let finish: () => void = () => undefined;
  const outcome = within('stores close', new Promise<void>((resolve) => (finish = resolve)));
  clock.advance(4_999);
  finish();
  assert.equal(await outcome, true, 'ended 1 ms before its bound');
  assert.equal(await within('no step', undefined), true, 'no step is in time');
  await assert.rejects(within('read store flush', Promise.reject(new Error('flush failed'))), /flush failed/);
  assert.equal(clock.pendingTimers(), 0, 'the bounds are cancelled once their steps end');
  await settle();
  assert.deepEqual(lines, []);
});

test("a step still waiting when its bound passes is left behind and logged; its later failure is no one's", async () => {
  const clock = new VirtualClock(T0);
  const { log, lines } = recordingLog();
  const within = closeStepBound(clock, 5_000, log, 'closing after a core failure');
  let fail: (error: Error) => void = () => undefined;
  const step = new Promise<void>((_resolve, reject) => (fail = reject));
  const outcome = within('snapshot replica stop', step);
  clock.advance(4_999);
  await settle();
  clock.advance(1);
  assert.equal(await outcome, false, 'late at its bound');
  await settle();
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.step, 'snapshot replica stop');
  assert.match(lines[0]!.msg, /^closing after a core failure: a step did not finish in time/);
  // Failing afterwards raises no unhandled rejection.
  fail(new Error('too late'));
  await settle();
});
