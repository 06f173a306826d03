// Tests of replay configuration loading: every bad config gives one clear error naming the field,
// defaults follow Dynamo/AISimulate, and the published JSON Schema matches the zod schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigError, parseReplayConfig } from '../../src/config/load';
import { replayConfigJsonSchema } from '../../src/config/schema';
import { ROOT } from '../support/paths';

const BASE = readFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), 'utf8');

function problemsOf(text: string): { path: string; message: string }[] {
  try {
    parseReplayConfig(text, 'test.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.problems;
  }
  assert.fail('the config was accepted');
}

test('the example config is valid and gets the documented defaults', () => {
  const config = parseReplayConfig(BASE, 'base.yaml');
  const role = config.cluster.workers[0];
  assert.equal(role.host_offload?.latency_to_first_byte_ms, 0);
  assert.equal(role.host_offload?.shared_h2d_bandwidth_gbps, 80);
  assert.equal(role.dp_size, 1);
  assert.equal(role.engine.enable_prefix_caching, true);
  assert.equal(config.router.overlap_score_credit, 1.0);
  assert.equal(config.router.prefill_load_scale, 1.0);
});

test("a router given only its policy takes SCORE-2/3's documented weights", () => {
  const config = parseReplayConfig(BASE.replace('  kv_event_lag_ms: 0\n  host_cache_hit_weight: 1.0\n', ''), 'base.yaml');
  assert.deepEqual(
    { ...config.router },
    { policy: 'kv', kv_event_lag_ms: 0, overlap_score_credit: 1.0, host_cache_hit_weight: 0.75, prefill_load_scale: 1.0, router_temperature: 0 },
  );
});

test('an unknown field is rejected with its path and the nearest valid name', () => {
  const problems = problemsOf(BASE.replace('        max_num_seqs: 4\n', '        max_num_seqs: 4\n        max_num_sequences: 4\n'));
  assert.deepEqual(problems, [{ path: 'cluster.workers[0].engine.max_num_sequences', message: 'unknown field; did you mean max_num_seqs?' }]);
  const lag = problemsOf(BASE.replace('kv_event_lag_ms: 0', 'kv_event_lag: 0'));
  assert.deepEqual(lag, [{ path: 'router.kv_event_lag', message: 'unknown field; did you mean kv_event_lag_ms?' }]);
  const nothingClose = problemsOf(BASE.replace('kv_event_lag_ms: 0', 'colour: red'));
  assert.deepEqual(nothingClose, [{ path: 'router.colour', message: 'unknown field' }]);
  const part = problemsOf(BASE.replace('prompt: [{ tokens: 15 }]', 'prompt: [{ tokenz: 15 }]'));
  assert.deepEqual(part, [{ path: 'workload.requests[1].prompt[0].tokenz', message: 'unknown field; did you mean tokens?' }]);
});

test('a negative bandwidth is rejected with its path', () => {
  const problems = problemsOf(BASE.replace('d2h_bandwidth_gbps: 1', 'd2h_bandwidth_gbps: -5'));
  assert.deepEqual(problems, [{ path: 'cluster.workers[0].host_offload.d2h_bandwidth_gbps', message: 'd2h_bandwidth_gbps must be ≥ 0' }]);
});

test('host_offload without num_host_blocks is rejected', () => {
  const problems = problemsOf(BASE.replace('        num_host_blocks: 16\n', ''));
  assert.equal(problems.length, 1);
  assert.equal(problems[0].path, 'cluster.workers[0].host_offload.num_host_blocks');
});

test('host_offload without kv_cache_bytes_per_token is rejected', () => {
  const problems = problemsOf(BASE.replace('        kv_cache_bytes_per_token: 250000\n', ''));
  assert.deepEqual(problems.map((p) => p.path), ['cluster.workers[0].engine.kv_cache_bytes_per_token']);
});

test('shared pool participants that disagree are rejected, naming the field and both groups', () => {
  const shared = BASE.replace('scope: dp_rank_local', 'scope: cluster_shared');
  const second = shared.replace(
    'router:\n',
    [
      '    - role: aggregated',
      '      engine: { block_size: 4, num_gpu_blocks: 4, kv_cache_bytes_per_token: 250000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
      '      host_offload: { num_host_blocks: 16, scope: cluster_shared, kv_layout_id: other }',
      'router:\n',
    ].join('\n'),
  );
  const problems = problemsOf(second);
  assert.equal(problems.length, 1);
  assert.equal(problems[0].path, 'cluster.workers[1]');
  assert.match(problems[0].message, /shared G2 pool participants disagree on host_offload\.kv_layout_id: "other" here, "default" on cluster\.workers\[0\]/);
});

test('bad requests are rejected: unknown prefix, forward reference, wrong hash count', () => {
  const unknownPrefix = problemsOf(BASE.replace('{ prefix: system prompt }', '{ prefix: missing prompt }'));
  assert.deepEqual(unknownPrefix.map((p) => p.path), ['workload.requests[0].prompt[0].prefix']);
  const forward = problemsOf(BASE.replace('extends: a1', 'extends: z9'));
  assert.deepEqual(forward.map((p) => p.path), ['workload.requests[3].extends']);
  const hashes = problemsOf(BASE.replace('prompt: [{ tokens: 15 }]', 'hash_ids: [1, 2], input_length: 1500'));
  assert.deepEqual(hashes.map((p) => p.path), ['workload.requests[1].hash_ids']);
});

test('YAML syntax errors name the line', () => {
  const problems = problemsOf('seed: 1\ncluster: [\n');
  assert.match(problems[0].path, /^line \d+, column \d+$/);
});

test('the published JSON Schema is the one the code generates (run `npx kvqual schema > schema/kvqual-config.schema.json`)', () => {
  const published = JSON.parse(readFileSync(path.join(ROOT, 'schema', 'kvqual-config.schema.json'), 'utf8'));
  assert.deepEqual(published, JSON.parse(JSON.stringify(replayConfigJsonSchema())));
});

test('names the object prototype owns are ordinary names: a prefix named toString or constructor is read as given, one never defined is refused; __proto__ is refused wherever it is a key', () => {
  const config = (prefixes: string, used: string) =>
    `cluster:\n  workers:\n    - role: aggregated\n      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }\nworkload:\n  prefixes: ${prefixes}\n  requests:\n    - { id: a, arrival_ms: 0, prompt: [{ prefix: ${used} }, { tokens: 4 }], output_length: 2 }\n`;
  for (const name of ['toString', 'constructor', 'hasOwnProperty']) {
    assert.equal(parseReplayConfig(config(`{ ${name}: 8 }`, name), 't.yaml').workload.prefixes[name], 8, name);
    assert.deepEqual(problemsOf(config('{ system: 8 }', name)), [{ path: 'workload.requests[0].prompt[0].prefix', message: `no prefix named "${name}" in workload.prefixes` }]);
  }
  assert.deepEqual(problemsOf(config('{ "__proto__": 4 }', '"__proto__"')), [
    { path: 'workload.prefixes.__proto__', message: "no field or name may be __proto__ (it would be read as the object's prototype, not as a value)" },
  ]);
  // Inside a list, after the fields and lists before it were walked: the path names its place.
  assert.deepEqual(problemsOf(config('{ system: 8 }', 'system }, { "__proto__": 1, tokens: 4').replace('prompt: [{', 'prompt: [{ tokens: 2 }, {')), [
    { path: 'workload.requests[0].prompt[2].__proto__', message: "no field or name may be __proto__ (it would be read as the object's prototype, not as a value)" },
  ]);
});
