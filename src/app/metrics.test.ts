import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceMetrics } from './metrics.ts';

function sampleValue(body: string, line: string): number {
  const found = body.split('\n').find((candidate) => candidate.startsWith(`${line} `));
  assert.ok(found !== undefined, `no sample ${line} in:\n${body}`);
  return Number(found.slice(line.length + 1));
}

/** Metrics whose scrape-time sources all read 0 (or the sequence and read store's seq given). */
function idleMetrics(sequence = 0, applied = 0): ServiceMetrics {
  return new ServiceMetrics({
    sequence: () => sequence,
    readStoreApplied: () => applied,
    journalFirstSeq: () => 1,
    wsConnections: () => 0,
  });
}

/** `venue_request_seconds_<sample>` of one transport and outcome (`le` for a bucket). */
function requestSample(
  body: string,
  sample: 'count' | 'sum' | 'bucket',
  transport: string,
  outcome: string,
  le?: string,
): number {
  const bound = le === undefined ? '' : `le="${le}",`;
  return sampleValue(
    body,
    `venue_request_seconds_${sample}{${bound}transport="${transport}",outcome="${outcome}"}`,
  );
}

describe('service metrics', () => {
  test('counts requests by method and times them by transport and outcome', async () => {
    const metrics = idleMetrics();
    metrics.request('private/buy', 'ws', true, 0.4);
    metrics.request('private/buy', 'ws', true, 7);
    metrics.request('private/buy', 'http', false, 2);
    const { contentType, body } = await metrics.render();
    assert.match(contentType, /^text\/plain/);
    assert.equal(sampleValue(body, 'venue_requests_total{method="private/buy"}'), 3);
    assert.equal(requestSample(body, 'count', 'ws', 'ok'), 2);
    assert.equal(requestSample(body, 'bucket', 'ws', 'ok', '0.0005'), 1);
    assert.equal(requestSample(body, 'bucket', 'ws', 'ok', '0.008'), 2);
    assert.equal(requestSample(body, 'count', 'http', 'error'), 1);
  });

  test('journal batches, market turns and the gauges read at scrape time', async () => {
    let sequence = 10;
    const metrics = new ServiceMetrics({
      sequence: () => sequence,
      readStoreApplied: () => 7,
      journalFirstSeq: () => 3,
      wsConnections: () => 2,
    });
    metrics.journalBatch(250, 0.9);
    metrics.journalBatch(1, 12, 0.4);
    metrics.marketTurn(1.5);
    sequence = 12;
    const { body } = await metrics.render();
    assert.equal(sampleValue(body, 'venue_journal_entries_total'), 251);
    assert.equal(sampleValue(body, 'venue_journal_batch_seconds_count'), 2);
    assert.equal(sampleValue(body, 'venue_journal_batch_seconds_bucket{le="0.001"}'), 1);
    // Only the batch whose storage time is known is in the storage series.
    assert.equal(sampleValue(body, 'venue_journal_storage_seconds_count'), 1);
    assert.equal(sampleValue(body, 'venue_journal_storage_seconds_bucket{le="0.001"}'), 1);
    assert.equal(sampleValue(body, 'venue_market_turn_seconds_bucket{le="0.002"}'), 1);
    assert.equal(sampleValue(body, 'venue_sequence'), 12);
    assert.equal(sampleValue(body, 'venue_read_store_lag_commands'), 5);
    assert.equal(sampleValue(body, 'venue_journal_first_seq'), 3);
    assert.equal(sampleValue(body, 'venue_ws_connections'), 2);
    assert.match(body, /^nodejs_eventloop_lag_seconds /m, 'the process collectors are registered');
  });

  test('refused connections and dropped slow consumers, by reason', async () => {
    const metrics = idleMetrics();
    metrics.connectionRefused('address');
    metrics.connectionRefused('address');
    metrics.connectionRefused('total');
    metrics.slowConsumerDisconnect('connection');
    metrics.slowConsumerDisconnect('budget');
    metrics.slowConsumerDisconnect('budget');
    const { body } = await metrics.render();
    assert.equal(sampleValue(body, 'venue_connections_refused_total{reason="address"}'), 2);
    assert.equal(sampleValue(body, 'venue_connections_refused_total{reason="total"}'), 1);
    assert.equal(sampleValue(body, 'venue_ws_slow_consumer_disconnects_total{reason="connection"}'), 1);
    assert.equal(sampleValue(body, 'venue_ws_slow_consumer_disconnects_total{reason="budget"}'), 2);
  });

  test('a registry reset zeroes the series, which keep counting afterwards', async () => {
    const metrics = idleMetrics();
    metrics.request('public/test', 'http', true, 1);
    metrics.journalBatch(3, 1);
    metrics.registry.resetMetrics();
    metrics.request('public/test', 'http', true, 30);
    const { body } = await metrics.render();
    assert.equal(sampleValue(body, 'venue_requests_total{method="public/test"}'), 1);
    assert.equal(requestSample(body, 'bucket', 'http', 'ok', '0.02'), 0);
    assert.equal(requestSample(body, 'bucket', 'http', 'ok', '0.05'), 1);
    assert.equal(requestSample(body, 'sum', 'http', 'ok'), 0.03);
    assert.equal(sampleValue(body, 'venue_journal_entries_total'), 0);
  });
});

test('one transport: ok and error requests land in their own series', async () => {
  const m = idleMetrics();
  m.request('public/test', 'http', true, 1);
  m.request('public/test', 'http', false, 1);
  const { body } = await m.render();
  assert.equal(requestSample(body, 'count', 'http', 'ok'), 1);
  assert.equal(requestSample(body, 'count', 'http', 'error'), 1);
});

test('buckets: a value equal to a bound counts in it (le); one past the last bound only in +Inf', async () => {
  const m = idleMetrics();
  m.request('public/test', 'http', true, 1); // 0.001 s exactly
  m.request('public/test', 'http', true, 2_000); // 2 s, past the last bound (1 s)
  const { body } = await m.render();
  const b = (le: string) => requestSample(body, 'bucket', 'http', 'ok', le);
  assert.equal(b('0.001'), 1);
  assert.equal(b('1'), 1);
  assert.equal(b('+Inf'), 2);
  assert.equal(requestSample(body, 'count', 'http', 'ok'), 2);
});

test('read store lag never goes negative (a store reset ahead of the sequencer)', async () => {
  const { body } = await idleMetrics(3, 5).render();
  assert.equal(sampleValue(body, 'venue_read_store_lag_commands'), 0);
});
