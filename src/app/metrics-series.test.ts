import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceMetrics } from './metrics.ts';

function sampleValue(body: string, line: string): number {
  const found = body.split('\n').find((candidate) => candidate.startsWith(`${line} `));
  assert.ok(found !== undefined, `no sample ${line} in:\n${body}`);
  return Number(found.slice(line.length + 1));
}

function metrics(sequence = 0, applied = 0): ServiceMetrics {
  return new ServiceMetrics({
    sequence: () => sequence,
    readStoreApplied: () => applied,
    journalFirstSeq: () => 1,
    wsConnections: () => 0,
  });
}

test('one transport: ok and error requests land in their own series', async () => {
  const m = metrics();
  m.request('public/test', 'http', true, 1);
  m.request('public/test', 'http', false, 1);
  const { body } = await m.render();
  assert.equal(sampleValue(body, 'venue_request_seconds_count{transport="http",outcome="ok"}'), 1);
  assert.equal(sampleValue(body, 'venue_request_seconds_count{transport="http",outcome="error"}'), 1);
});

test('buckets: a value equal to a bound counts in it (le); one past the last bound only in +Inf', async () => {
  const m = metrics();
  m.request('public/test', 'http', true, 1); // 0.001 s exactly
  m.request('public/test', 'http', true, 2_000); // 2 s, past the last bound (1 s)
  const { body } = await m.render();
  const b = (le: string) =>
    sampleValue(body, `venue_request_seconds_bucket{le="${le}",transport="http",outcome="ok"}`);
  assert.equal(b('0.001'), 1);
  assert.equal(b('1'), 1);
  assert.equal(b('+Inf'), 2);
  assert.equal(sampleValue(body, 'venue_request_seconds_count{transport="http",outcome="ok"}'), 2);
});

test('read store lag never goes negative (a store reset ahead of the sequencer)', async () => {
  const { body } = await metrics(3, 5).render();
  assert.equal(sampleValue(body, 'venue_read_store_lag_commands'), 0);
});
