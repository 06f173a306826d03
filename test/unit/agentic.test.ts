// Tests of the agentic trace format (line-numbered errors for bad rows), the AGX-6 guard's
// messages, and replaying the example agentic config through the CLI (identical digests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { AgenticTraceError, parseAgenticTrace } from '../../src/agentic/trace';
import { ConfigError, parseReplayConfig } from '../../src/config/load';
import { ROOT } from '../support/paths';
import { kvqualInProcess, kvqualProcess } from '../support/cli';

const HEADER = '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4}';

function row(fields: Record<string, unknown>): string {
  return JSON.stringify({ request_id: 'a', play_id: 'p', session_id: 's', input_length: 8, output_length: 2, hash_ids: [1, 2], not_before_ms: 0, dependencies: [], ...fields });
}

function errorOf(lines: string[]): AgenticTraceError {
  try {
    parseAgenticTrace(lines.join('\n'), 'trace.jsonl');
  } catch (error) {
    assert.ok(error instanceof AgenticTraceError, String(error));
    return error;
  }
  assert.fail('the trace was accepted');
}

test('the example trace parses: plays sorted, nodes in dependency order', () => {
  const trace = parseAgenticTrace(readFileSync(path.join(ROOT, 'examples', 'agentic', 'coding-agent.jsonl'), 'utf8'));
  assert.equal(trace.block_size, 4);
  assert.deepEqual(trace.plays.map((p) => p.play_id), ['fix-bug', 'write-docs']);
  assert.deepEqual(trace.plays[0].nodes.map((n) => n.request_id), ['fb-plan', 'fb-grep', 'fb-resume', 'fb-summary']);
  assert.equal(trace.plays[0].nodes[2].dependencies[0].delay_ns, 20_000_000);
});

test('a missing predecessor names its line', () => {
  const error = errorOf([HEADER, row({}), row({ request_id: 'b', dependencies: [{ predecessor: 'zzz', trigger: 'completion', delay_ms: 0, relation: 'sequence' }] })]);
  assert.equal(error.line, 3);
  assert.match(error.message, /trace\.jsonl: line 3: predecessor "zzz" does not exist/);
});

test('a dependency cycle names a line and the cycle', () => {
  const dep = (predecessor: string) => [{ predecessor, trigger: 'completion', delay_ms: 0, relation: 'sequence' }];
  const error = errorOf([HEADER, row({ request_id: 'a', dependencies: dep('b') }), row({ request_id: 'b', dependencies: dep('a') })]);
  assert.match(error.message, /line \d: dependency cycle: (a → b → a|b → a → b)/);
});

test('a wrong hash count names the line and the expected count', () => {
  const error = errorOf([HEADER, row({ input_length: 9, hash_ids: [1, 2] })]);
  assert.equal(error.line, 2);
  assert.match(error.message, /hash_ids has 2 ids for input_length 9; expected 3 at block_size 4/);
});

test('a negative delay names the line and the field', () => {
  const error = errorOf([HEADER, row({}), row({ request_id: 'b', dependencies: [{ predecessor: 'a', trigger: 'completion', delay_ms: -5, relation: 'sequence' }] })]);
  assert.equal(error.line, 3);
  assert.match(error.message, /dependencies\[0\]\.delay_ms must not be negative, got -5/);
});

test('a bad header, a predecessor in another play, a duplicate id and an unknown field are rejected', () => {
  assert.match(errorOf(['{"schema":"other","version":2,"block_size":4}']).message, /line 1: header: schema must be "dynamo\.agentic_mooncake"/);
  const otherPlay = errorOf([HEADER, row({}), row({ request_id: 'b', play_id: 'q', dependencies: [{ predecessor: 'a' }] })]);
  assert.match(otherPlay.message, /line 3: predecessor "a" belongs to play "p", not "q"/);
  assert.match(errorOf([HEADER, row({}), row({})]).message, /line 3: request_id "a" already used on line 2/);
  assert.match(errorOf([HEADER, row({ colour: 'red' })]).message, /line 2: unknown field colour/);
  assert.match(errorOf([HEADER, 'not json']).message, /line 2: not valid JSON/);
});

const AGENTIC_BASE = readFileSync(path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml'), 'utf8');

function guardProblems(text: string): { path: string; message: string }[] {
  try {
    parseReplayConfig(text, 'agentic.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.problems;
  }
  assert.fail('the config was accepted');
}

test('every AGX-6 rejection names the rule, the role and what to change', () => {
  const role = '    - role: aggregated\n';
  const cases: [string, string, RegExp][] = [
    ['backend: sglang', 'cluster.workers[0].backend', /^AGX-6: agentic G2 requires the vLLM backend on every role, not sglang$/],
    ['dp_size: 2', 'cluster.workers[0].dp_size', /^AGX-6: agentic G2 requires attention DP = 1 on every role, not 2$/],
    ['scaling_policy: planner', 'cluster.workers[0].scaling_policy', /^AGX-6: agentic G2 requires static worker pools; remove scaling_policy "planner"$/],
    ['speculative_decoding: { method: eagle, num_speculative_tokens: 3 }', 'cluster.workers[0].speculative_decoding', /^AGX-6: agentic G2 does not support speculative decoding/],
  ];
  for (const [line, pathText, message] of cases) {
    const problems = guardProblems(AGENTIC_BASE.replace(role, `${role}      ${line}\n`));
    assert.equal(problems.length, 1, line);
    assert.equal(problems[0].path, pathText);
    assert.match(problems[0].message, message);
  }
  const g3 = guardProblems(AGENTIC_BASE.replace('        scope: cluster_shared\n', '        scope: cluster_shared\n        disk_offload: { num_disk_blocks: 1024 }\n'));
  assert.deepEqual(g3.map((p) => p.path), ['cluster.workers[0].host_offload.disk_offload']);
  assert.match(g3[0].message, /^AGX-6: agentic G2 does not support a G3 \(disk\) tier/);
});

test('without agentic G2 the same features are rejected as not modelled, without the AGX-6 label', () => {
  const noG2 = AGENTIC_BASE.replace(/      host_offload:\n(        .*\n)+/, '').replace('    - role: aggregated\n', '    - role: aggregated\n      speculative_decoding: { method: eagle, num_speculative_tokens: 3 }\n');
  const problems = guardProblems(noG2);
  assert.deepEqual(problems, [{ path: 'cluster.workers[0].speculative_decoding', message: 'speculative decoding is not modelled by kvqual' }]);
});

test('the example agentic config replays through the CLI, and two runs give the same digest', () => {
  // The first run is a real process, the second runs in this one: both must give the same digest.
  const args = ['replay', 'examples/agentic/two-lanes-shared.yaml', '--json'];
  const [first, second] = [kvqualProcess(args), kvqualInProcess(args)];
  assert.equal(first.status, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(report.digest, JSON.parse(second.stdout).digest);
  assert.equal(report.summary.plays.length, 8);
  assert.ok(report.per_request.every((r: { cache_id: string; play_id: string }) => r.cache_id === `${r.play_id}:cache`));
});

test('a bad agentic trace makes the CLI exit 2 naming the trace line', () => {
  const result = kvqualInProcess(['replay', 'test/fixtures/agentic/bad-trace.yaml']);
  assert.equal(result.status, 2, result.stdout);
  assert.match(result.stderr, /bad-trace\.jsonl: line 3: predecessor "missing" does not exist/);
});

test('a long dependency chain listed last to first is ordered without overflowing the stack', () => {
  const rows = Array.from({ length: 50_000 }, (_, i) => row({ request_id: `r${i}`, dependencies: i === 0 ? [] : [{ predecessor: `r${i - 1}` }] })).reverse();
  const trace = parseAgenticTrace([HEADER, ...rows].join('\n'), 'chain.jsonl');
  const order = trace.plays[0].nodes.map((node) => node.request_id);
  assert.deepEqual([order[0], order[1], order[49_999]], ['r0', 'r1', 'r49999']);
  assert.match(errorOf([HEADER, row({ request_id: 'a', dependencies: [{ predecessor: 'a' }] })]).message, /line 2: dependency cycle: a → a/);
});
