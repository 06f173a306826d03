// Tests of the AIPerf-style metrics against a small run computed by hand: per-request TTFT, TTST,
// ITL (the mean of the request's own gaps), TPOT, E2E and queue time; statistics over per-request
// values, never pooled gaps; throughputs over the virtual duration; goodput against SLOs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { statistics } from '../../src/report/requestMetrics';
import { handComputedRun } from '../support/configs';

// One rank, fixed timing: prefill 2 ms, decode 1 ms (a mixed pass takes 3 ms).
// a: arrives 0, 4 prompt tokens, 5 outputs. b: arrives 2.5 ms, 4 prompt tokens, 2 outputs.
// pass 0–2 prefill a (a#1 at 2); 2–3 decode a (a#2 at 3); b arrives at 2.5 and waits;
// 3–6 decode a + prefill b (a#3, b#1 at 6); 6–7 (a#4, b#2 at 7: b ends); 7–8 (a#5 at 8: a ends).
// a: TTFT 2, TTST 1, gaps 1, 3, 1, 1 → ITL 1.5, E2E 8, queue 0.
// b: TTFT 3.5 (queued 0.5 ms, then a 3 ms mixed pass), TTST 1, gaps 1 → ITL 1, E2E 4.5, queue 0.5.
const CONFIG = handComputedRun;

test('RPT-2: per-request TTFT, TTST, ITL, TPOT, E2E and queue time match the hand-computed run', () => {
  const { report } = runReplay(parseReplayConfig(CONFIG(''), 't.yaml'));
  const [a, b] = report.per_request;
  assert.deepEqual(
    [a.ttft_ms, a.time_to_second_token_ms, a.inter_token_latency_ms, a.time_per_output_token_ms, a.e2e_ms, a.queue_ms],
    [2, 1, 1.5, 1.5, 8, 0],
  );
  assert.deepEqual(
    [b.ttft_ms, b.time_to_second_token_ms, b.inter_token_latency_ms, b.time_per_output_token_ms, b.e2e_ms, b.queue_ms],
    [3.5, 1, 1, 1, 4.5, 0.5],
  );
  assert.equal(a.output_token_throughput_per_user, 1e9 / 1.5e6);
  assert.equal(b.output_token_throughput_per_user, 1000);
});

test('RPT-2: ITL statistics are over per-request means, not pooled gaps; throughputs over the virtual duration', () => {
  const { report } = runReplay(parseReplayConfig(CONFIG(''), 't.yaml'));
  const m = report.summary.metrics;
  assert.equal(m.request_count, 2);
  assert.equal(m.benchmark_duration_ms, 8);
  assert.equal(m.request_throughput_per_s, 250);
  assert.equal(m.output_token_throughput_per_s, 875);
  assert.equal(m.total_token_throughput_per_s, 1875);
  assert.deepEqual(m.inter_token_latency_ms, { count: 2, mean: 1.25, min: 1, p50: 1, p90: 1.5, p95: 1.5, p99: 1.5, max: 1.5 });
  assert.equal(report.summary.itl_ms.mean, 1.4, 'the legacy itl_ms pools the 5 gaps: (1 + 3 + 1 + 1 + 1) / 5');
  assert.deepEqual(m.time_to_first_token_ms, { count: 2, mean: 2.75, min: 2, p50: 2, p90: 3.5, p95: 3.5, p99: 3.5, max: 3.5 });
  assert.equal(m.request_latency_ms.mean, 6.25);
  assert.equal(m.queue_time_ms.max, 0.5);
  assert.equal(m.time_to_second_token_ms.mean, 1);
  assert.deepEqual(m.output_sequence_length, { count: 2, mean: 3.5, min: 2, p50: 2, p90: 5, p95: 5, p99: 5, max: 5 });
  assert.equal(m.goodput, undefined, 'no SLO, no goodput');
});

test('RPT-2: the run\'s duration is from its first arrival to its last finish, wherever the run starts', () => {
  // The same two requests 10 ms later: the same duration and throughputs, every time 10 ms later.
  const later = CONFIG('').replace('arrival_ms: 0,', 'arrival_ms: 10,').replace('arrival_ms: 2.5,', 'arrival_ms: 12.5,');
  const { report } = runReplay(parseReplayConfig(later, 't.yaml'));
  const m = report.summary.metrics;
  assert.deepEqual([m.benchmark_duration_ms, m.request_throughput_per_s, m.output_token_throughput_per_s, m.total_token_throughput_per_s], [8, 250, 875, 1875]);
  assert.deepEqual(report.per_request.map((r) => [r.arrival_ms, r.ttft_ms, r.e2e_ms]), [[10, 2, 8], [12.5, 3.5, 4.5]]);
});

test('goodput: the share and rate of finished requests meeting every SLO', () => {
  const ttft = runReplay(parseReplayConfig(CONFIG('slo: { ttft_ms: 3 }'), 't.yaml')).report.summary.metrics.goodput!;
  assert.deepEqual(ttft, { slo: { ttft_ms: 3 }, requests_meeting_slo: 1, share: 0.5, goodput_per_s: 125 });
  const tpot = runReplay(parseReplayConfig(CONFIG('slo: { tpot_ms: 1.2, e2e_ms: 10 }'), 't.yaml')).report.summary.metrics.goodput!;
  assert.equal(tpot.requests_meeting_slo, 1, 'a (TPOT 1.5 ms) misses 1.2 ms; b (1 ms) meets it');
  const all = runReplay(parseReplayConfig(CONFIG('slo: { ttft_ms: 3.5, tpot_ms: 1.5, e2e_ms: 8 }'), 't.yaml')).report.summary.metrics.goodput!;
  assert.equal(all.share, 1, 'an SLO equal to the value is met');
});

test('statistics: nearest-rank percentiles and min over any order; empty gives nulls (not measured), never zeros', () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.deepEqual(statistics(values), { count: 100, mean: 50.5, min: 1, p50: 50, p90: 90, p95: 95, p99: 99, max: 100 });
  assert.deepEqual(statistics([]), { count: 0, mean: null, min: null, p50: null, p90: null, p95: null, p99: null, max: null }, 'nothing measured: null, not 0');
});

test('statistics in ms are the ns divided, so a maximum is one of the values (1,800,000 ns is 1.8 ms, not 1.7999999999999998)', () => {
  const inMs = statistics([1_800_000, 2_200_000, 4_350_000], 1_000_000);
  assert.deepEqual([inMs.min, inMs.p50, inMs.max], [1.8, 2.2, 4.35]);
  assert.equal(inMs.mean, 8_350_000 / 3 / 1_000_000);
});
