// What the SLO scenarios measure (src/slo/claims.ts): statistics as the report computes them,
// goodput over every request sent, statistic names in a reader's words, and the trace-level run's
// config (src/slo/traceRun.ts) as `kvqual replay` would read it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import type { RequestRecord, RunReport } from '../../src/report/report';
import { goodput, metricValues, parseStatistic, statisticOf } from '../../src/slo/claims';
import { SERVING_PROFILES, setupProblem, traceRunConfig } from '../../src/slo/traceRun';
import { traceFile, traceFolder } from '../../src/traceFolder';
import { ROOT } from '../support/paths';

const EXAMPLE = path.join(ROOT, 'examples', 'configs', 'prefill-decode.yaml');

test("a statistic over a run's finished requests is the report's own: mean and nearest-rank percentiles", () => {
  const { report } = runReplay(parseReplayConfig(fs.readFileSync(EXAMPLE, 'utf8'), EXAMPLE));
  for (const [metric, stats] of [
    ['time to first token', report.summary.metrics.time_to_first_token_ms],
    ['inter-token latency', report.summary.metrics.inter_token_latency_ms],
    ['request latency', report.summary.metrics.request_latency_ms],
  ] as const) {
    const values = metricValues(report, metric);
    assert.equal(values.length, stats.count, metric);
    for (const p of [50, 90, 95, 99] as const) assert.equal(statisticOf(values, { kind: 'percentile', p }), stats[`p${p}`], `${metric} p${p}`);
    assert.ok(Math.abs(statisticOf(values, { kind: 'mean' })! - stats.mean!) < 1e-9, `${metric} mean`);
  }
});

test('nearest rank: p50 of 1..4 is 2, p99 of ten values is the tenth, p1 the first; no values, no statistic', () => {
  assert.equal(statisticOf([4, 1, 3, 2], { kind: 'percentile', p: 50 }), 2);
  assert.equal(statisticOf([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], { kind: 'percentile', p: 99 }), 10);
  assert.equal(statisticOf([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], { kind: 'percentile', p: 1 }), 1);
  assert.equal(statisticOf([], { kind: 'mean' }), null);
});

function record(status: string, ttft_ms: number | null, inter_token_latency_ms: number | null): RequestRecord {
  return { status, ttft_ms, inter_token_latency_ms } as RequestRecord;
}

test('goodput counts the finished requests within both objectives over every request sent: a failed one counts against, a skipped one not at all', () => {
  const report = {
    per_request: [
      record('finished', 100, 10),
      record('finished', 2000, 100), // at both limits: meets them
      record('finished', 2000.001, 10),
      record('finished', 100, 100.5),
      record('finished', 100, null), // one output token: no ITL, meets that objective
      record('failed', null, null),
      record('skipped', null, null),
    ],
  } as unknown as RunReport;
  assert.deepEqual(goodput(report, 2000, 100), { meeting: 3, requests: 6, share: 0.5 });
});

test('a statistic is named in words; a wrong name or percentile is refused, naming the metrics', () => {
  assert.deepEqual(parseStatistic('p99 time to first token'), { statistic: { kind: 'percentile', p: 99 }, metric: 'time to first token' });
  assert.deepEqual(parseStatistic('mean inter-token latency'), { statistic: { kind: 'mean' }, metric: 'inter-token latency' });
  assert.match((parseStatistic('p99 time to frst token') as { problem: string }).problem, /"time to frst token" is not a latency metric .*the metrics are time to first token, /);
  assert.match((parseStatistic('p0 time to first token') as { problem: string }).problem, /from p1 to p100/);
  assert.match((parseStatistic('median time to first token') as { problem: string }).problem, /names no statistic/);
});

test('a trace-level run is the config kvqual replay reads: the trace, its first requests, the workers of the profile', () => {
  const config = traceRunConfig({ trace: 'conversation', requests: 500, workers: 8, profile: 'reference', time_scale: 1, seed: 7 }, 'round_robin', 'trace.jsonl');
  assert.equal(config.seed, 7);
  assert.equal(config.router.policy, 'round_robin');
  assert.equal(config.cluster.workers[0].replicas, 8);
  assert.equal(config.cluster.workers[0].engine.block_size, 512);
  assert.deepEqual([config.workload.mooncake?.max_requests, config.workload.mooncake?.trace], [500, 'trace.jsonl']);
  assert.match(setupProblem({ trace: 'chat', profile: 'reference' })!, /no Mooncake trace is called "chat"; the traces are conversation and synthetic/);
  assert.match(setupProblem({ trace: 'conversation', profile: 'huge' })!, /no serving profile is called "huge"; the profiles are reference/);
});

test('a missing trace folder is named, with the variable that points elsewhere', () => {
  assert.throws(() => traceFile(ROOT, 'conversation_trace.jsonl', { KVQUAL_TRACES: path.join(ROOT, 'no-such-folder') }), /conversation_trace\.jsonl is not at .*no-such-folder.*; put the published Mooncake traces in \.\.\/shared\/data\/mooncake beside the checkout, or name their folder in KVQUAL_TRACES/);
  assert.equal(traceFolder(ROOT, {}), path.resolve(ROOT, '..', 'shared', 'data', 'mooncake'));
});

test('the glossary prints the reference serving profile as the code defines it', () => {
  const glossary = fs.readFileSync(path.join(ROOT, 'docs', 'glossary.md'), 'utf8');
  const row = glossary.split('\n').find((line) => line.startsWith('| serving profile |'))!;
  const { engine, host_offload } = SERVING_PROFILES.reference as { engine: Record<string, number> & { timing: { linear: Record<string, number> } }; host_offload: Record<string, number> };
  const number = (value: number) => value.toLocaleString('en-US');
  for (const text of [
    `${engine.max_num_seqs} running requests`,
    `${number(engine.max_num_batched_tokens)} tokens a pass`,
    `${engine.timing.linear.base_ms} ms + ${engine.timing.linear.prefill_token_ms} ms per prompt token + ${engine.timing.linear.decode_seq_ms} ms per decoding request + ${engine.timing.linear.context_token_ms} ms per context token`,
    `${engine.block_size}-token blocks`,
    `${number(engine.num_gpu_blocks)} GPU blocks and ${number(host_offload.num_host_blocks)} host blocks`,
    `${host_offload.d2h_bandwidth_gbps} GB/s each way`,
  ]) {
    assert.ok(row.includes(text), text);
  }
  assert.equal(host_offload.h2d_bandwidth_gbps, host_offload.d2h_bandwidth_gbps);
  assert.deepEqual(Object.keys(SERVING_PROFILES), ['reference'], 'each profile is in the glossary');
});
