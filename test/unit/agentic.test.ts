// Tests of the agentic trace format (line-numbered errors for bad rows), the AGX-6 guard's
// messages, and replaying the example agentic config through the CLI (identical digests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AgenticTraceError, cycleText, parseAgenticTrace } from '../../src/agentic/trace';
import { ConfigError, parseReplayConfig } from '../../src/config/load';
import { ROOT } from '../support/paths';
import { kvqualInProcess, kvqualProcess } from '../support/cli';
import fc from 'fast-check';
import { fuzzCaseArbitrary, KNOWN_DEFECT_AREAS } from '../../src/fuzz/generate';
import { caseDigest } from '../../src/fuzz/runCase';

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
  // 20,000: a recursive post-order visit (one call per link) already overflows Node's stack at 10,000.
  const rows = Array.from({ length: 20_000 }, (_, i) => row({ request_id: `r${i}`, dependencies: i === 0 ? [] : [{ predecessor: `r${i - 1}` }] })).reverse();
  const trace = parseAgenticTrace([HEADER, ...rows].join('\n'), 'chain.jsonl');
  const order = trace.plays[0].nodes.map((node) => node.request_id);
  assert.deepEqual([order[0], order[1], order[19_999]], ['r0', 'r1', 'r19999']);
  assert.match(errorOf([HEADER, row({ request_id: 'a', dependencies: [{ predecessor: 'a' }] })]).message, /line 2: dependency cycle: a → a/);
});

// ── v2 as AISimulate and Dynamo write it ────────────────────────────────────────────────────

const AISIMULATE_HEADER = '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"hash_id_scope":"local","source":{"format":"weka","digest":"abc"}}';

test("AISimulate's way of writing v2 is read: header scope and source, model, request_id naming the predecessor, recorded fields", () => {
  const trace = parseAgenticTrace(
    [
      AISIMULATE_HEADER,
      row({ request_id: 'root', model: 'example/model', recorded_api_time_ms: 2.5, priority: 0, strict_priority: 0, policy_class: null }),
      row({ request_id: 'left', model: 'example/model', output_token_ids: [7, 8], dependencies: [{ request_id: 'root', relation: 'spawn', trigger: 'dispatch', delay_ms: 20 }] }),
      JSON.stringify({ request_id: 'right', play_id: 'p', session_id: 's', model: 'm', input_tokens: 8, output_tokens: 1, hash_ids: [1, 3], not_before_ms: 0, dependencies: [{ request_id: 'left', relation: 'join', trigger: 'completion', delay_ms: 0 }] }),
    ].join('\n'),
  );
  const nodes = trace.plays[0].nodes;
  assert.deepEqual(nodes.map((n) => [n.request_id, n.dependencies.map((d) => `${d.predecessor}/${d.trigger}/${d.relation}/${d.delay_ns}`)]), [
    ['root', []],
    ['left', ['root/dispatch/spawn/20000000']],
    ['right', ['left/completion/join/0']],
  ]);
  assert.deepEqual([nodes[2].input_length, nodes[2].output_length], [8, 1]);
});

test('64-bit hash ids are read exactly: each distinct id has a number of its own, the same id the same number, across rows and plays', () => {
  const big = ['18446744073709551615', '18446744073709551614', '9007199254740993', '9007199254740992'];
  const trace = parseAgenticTrace(
    [
      AISIMULATE_HEADER,
      `{"request_id":"a","play_id":"p","session_id":"s","model":"m","input_length":8,"output_length":1,"hash_ids":[${big[0]},${big[1]}],"not_before_ms":0}`,
      `{"request_id":"b","play_id":"p","session_id":"s","model":"m","input_length":12,"output_length":1,"hash_ids":[${big[0]},${big[2]},${big[3]}],"not_before_ms":0}`,
      `{"request_id":"c","play_id":"q","session_id":"s","model":"m","input_length":8,"output_length":1,"hash_ids":[${big[1]},5],"not_before_ms":0}`,
    ].join('\n'),
  );
  const ids = trace.plays.flatMap((play) => play.nodes.map((n) => n.hash_ids));
  // 2^53 + 1 and 2^53 are one double apart in JavaScript but two ids here; 2^53 − 1 and below stay as written.
  assert.deepEqual(ids, [
    [-1, -2],
    [-1, -3, -4],
    [-2, 5],
  ]);
  assert.match(errorOf([AISIMULATE_HEADER, `{"request_id":"a","play_id":"p","session_id":"s","input_length":4,"output_length":1,"hash_ids":[18446744073709551616]}`]).message, /line 2: hash_ids\[0\]: 18446744073709551616 is above 2\^64 − 1/);
  assert.match(errorOf([AISIMULATE_HEADER, `{"request_id":"a","play_id":"p","session_id":"s","input_length":8,"output_length":1,"hash_ids":[18446744073709551615,-1]}`]).message, /line 2: hash_ids\[1\] must be a whole number ≥ 0, got -1/);
});

test('plays numbered with source_play_ordinal are taken in that order; the numbers must be whole, one per play, 0 to plays − 1', () => {
  const numbered = (play: string, ordinal: unknown, id = play) => row({ request_id: id, play_id: play, source_play_ordinal: ordinal });
  const trace = parseAgenticTrace([HEADER, numbered('alpha', 1), numbered('beta', 2), numbered('gamma', 0), numbered('alpha', 1, 'alpha-2')].join('\n'));
  assert.deepEqual(trace.plays.map((p) => p.play_id), ['gamma', 'alpha', 'beta']);
  assert.match(errorOf([HEADER, numbered('a', 0), row({ request_id: 'b', play_id: 'b' })]).message, /line 3: source_play_ordinal is missing here but given on line 2/);
  assert.match(errorOf([HEADER, row({ request_id: 'b', play_id: 'b' }), numbered('a', 0)]).message, /line 3: source_play_ordinal is given here but missing on line 2/);
  assert.match(errorOf([HEADER, numbered('a', 0), numbered('a', 1, 'a-2')]).message, /line 3: source_play_ordinal 1 for play "a", which line 2 numbers 0/);
  assert.match(errorOf([HEADER, numbered('a', 0), numbered('b', 0)]).message, /line 3: source_play_ordinal 0 numbers both play "a" and play "b"/);
  assert.match(errorOf([HEADER, numbered('a', 0), numbered('b', 2)]).message, /line 3: source_play_ordinal 2 for play "b": the trace has 2 plays, numbered 0 to 1/);
  assert.match(errorOf([HEADER, numbered('a', -1)]).message, /line 2: source_play_ordinal must be a whole number ≥ 0, got -1/);
});

test("what AISimulate's fields may not be is refused, naming the line and the field", () => {
  const cases: [string[], RegExp][] = [
    [['{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"hash_id_scope":"global"}'], /line 1: header: hash_id_scope must be "local" \(hash ids name blocks inside one play\), got "global"/],
    [['{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"source":"weka"}'], /line 1: header: source must be an object \{"format": …, "digest": …\}, got "weka"/],
    [['{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"source":{"format":"weka"}}'], /line 1: header: source\.digest must be a non-empty string/],
    [['{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"source":{"format":"weka","digest":"x","when":1}}'], /line 1: header: source: unknown field when/],
    [['{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4,"blok_size":4}'], /line 1: header: unknown field blok_size; did you mean block_size\?/],
    [[HEADER, row({ model: '' })], /line 2: model must be a non-empty string, got ""/],
    [[HEADER, row({ input_tokens: 8 })], /line 2: input_length and input_tokens name the same thing: give one of them/],
    [[HEADER, row({ output_token_ids: [1] })], /line 2: output_token_ids has 1 tokens for output_length 2/],
    [[HEADER, row({ output_token_ids: [1, -2] })], /line 2: output_token_ids must be a list of token ids/],
    [[HEADER, row({ recorded_api_time_ms: -1 })], /line 2: recorded_api_time_ms must not be negative/],
    [[HEADER, row({ priority: 3 })], /line 2: priority 3: kvqual schedules first come, first served \(ENG-1\) and does not model priorities; give 0 or leave the field out/],
    [[HEADER, row({ strict_priority: 1 })], /line 2: strict_priority 1: kvqual schedules first come, first served/],
    [[HEADER, row({ policy_class: 'gold' })], /line 2: policy_class "gold": kvqual schedules first come, first served .*; give null or leave the field out/],
    [[HEADER, row({}), row({ request_id: 'b', dependencies: [{ predecessor: 'a', request_id: 'a' }] })], /line 3: dependencies\[0\]: predecessor and request_id both name the predecessor: give one of them/],
    [[HEADER, row({}), row({ request_id: 'b', dependencies: [{ request_id: '' }] })], /line 3: dependencies\[0\]\.request_id must be a non-empty string, got ""/],
  ];
  for (const [lines, message] of cases) assert.match(errorOf(lines).message, message, lines.at(-1));
});

test('the example trace as AISimulate writes it replays to the same digest as the example itself', () => {
  const [kvqualForm, aisimulateForm] = ['two-lanes-shared.yaml', 'two-lanes-shared-aisimulate.yaml'].map((name) => kvqualInProcess(['replay', `examples/agentic/${name}`, '--json']));
  assert.equal(aisimulateForm.status, 0, aisimulateForm.stderr);
  assert.equal(JSON.parse(aisimulateForm.stdout).digest, JSON.parse(kvqualForm.stdout).digest);
  const trace = readFileSync(path.join(ROOT, 'examples', 'agentic', 'coding-agent.aisimulate.jsonl'), 'utf8');
  assert.match(trace, /"request_id":"fb-plan","relation"/, 'its dependencies name the predecessor request_id');
  assert.match(trace, /"hash_ids":\[\d{17,}/, 'its hash ids are 64-bit');
});

/**
 * A trace in kvqual's way of writing v2, rewritten as AISimulate writes it: header scope and source,
 * rows with a model and input_tokens, dependencies naming request_id, plays numbered in play-id
 * order, and every hash id n (up to 2^53 − 1) written as the 64-bit id 2^63 + 1024 n + salt (one to one).
 */
function asAisimulateWrites(trace: string, salt: number): string {
  const [header, ...rows] = trace.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const plays = [...new Set(rows.map((row) => row.play_id as string))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = [JSON.stringify({ ...header, hash_id_scope: 'local', source: { format: 'kvqual fuzz case', digest: String(salt) } })];
  for (const { input_length, hash_ids, dependencies, ...rest } of rows) {
    const row = {
      ...rest,
      model: 'generated/model',
      source_play_ordinal: plays.indexOf(rest.play_id as string),
      input_tokens: input_length,
      hash_ids: '<ids>',
      dependencies: ((dependencies ?? []) as Record<string, unknown>[]).map(({ predecessor, ...edge }) => ({ request_id: predecessor, ...edge })),
    };
    const wide = (hash_ids as number[]).map((id) => (1n << 63n) + BigInt(id) * 1024n + BigInt(salt % 1024));
    lines.push(JSON.stringify(row).replace('"<ids>"', `[${wide.join(',')}]`));
  }
  return `${lines.join('\n')}\n`;
}

test('generated agentic workloads rewritten as AISimulate writes them (64-bit ids, request_id, ordinals) replay to the same digest', () => {
  const cases = fc.sample(fuzzCaseArbitrary({ exclude: KNOWN_DEFECT_AREAS }), { numRuns: 120, seed: 1893 }).filter((fuzzCase) => fuzzCase.agentic_trace !== null);
  assert.ok(cases.length >= 10, `${cases.length} agentic cases`);
  for (const [i, fuzzCase] of cases.entries()) {
    const rewritten = asAisimulateWrites(fuzzCase.agentic_trace!, i);
    assert.match(rewritten, /"hash_ids":\[\d{19}/);
    const digest = caseDigest(fuzzCase);
    assert.equal(caseDigest({ ...fuzzCase, agentic_trace: rewritten }), digest, `case ${i}`);
  }
});

// 150 mutations a run; KVQUAL_TRACE_MUTATIONS=N and KVQUAL_TRACE_MUTATION_SEED=S run more, or others.
test('mutated agentic traces, written either way, are replayed or refused with the line and the problem, never an internal error', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kvqual-agentic-mutations-'));
  const config = readFileSync(path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml'), 'utf8');
  writeFileSync(path.join(dir, 'config.yaml'), config.replace('trace: coding-agent.jsonl', 'trace: trace.jsonl'));
  const traces = ['coding-agent.jsonl', 'coding-agent.aisimulate.jsonl'].map((name) => readFileSync(path.join(ROOT, 'examples', 'agentic', name), 'utf8').trim().split('\n'));
  const odd = fc.constantFrom<unknown>(0, -1, 0.5, 1e300, 2 ** 53, 2 ** 64, '18446744073709551616', '', 'x', null, [], {}, true, [1], [2 ** 63], ['a'], { format: 'f', digest: 'd' }, 'local', 'completion', 'spawn');
  const field = fc.constantFrom('request_id', 'play_id', 'session_id', 'model', 'input_length', 'input_tokens', 'output_length', 'output_tokens', 'hash_ids', 'not_before_ms', 'dependencies', 'source_play_ordinal', 'output_token_ids', 'recorded_api_time_ms', 'priority', 'policy_class', 'schema', 'version', 'block_size', 'hash_id_scope', 'source', 'extra');
  const mutation = fc.record({ writer: fc.integer({ min: 0, max: 1 }), line: fc.nat(), field, value: fc.option(odd, { nil: undefined }), inDependency: fc.boolean() });
  const outcomes = new Map<number, number>();
  fc.assert(
    fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
      const lines = [...traces[mutations[0].writer]];
      for (const m of mutations) {
        const at = m.line % lines.length;
        const row = JSON.parse(lines[at].replace(/(\d{16,})/g, '"$1"')) as Record<string, unknown>;
        const edge: unknown = Array.isArray(row.dependencies) ? row.dependencies[0] : undefined;
        const target = m.inDependency && typeof edge === 'object' && edge !== null && !Array.isArray(edge) ? (edge as Record<string, unknown>) : row;
        if (m.value === undefined) delete target[m.field];
        else target[m.field] = m.value;
        lines[at] = JSON.stringify(row).replace(/"(\d{16,})"/g, '$1');
      }
      writeFileSync(path.join(dir, 'trace.jsonl'), `${lines.join('\n')}\n`);
      const result = kvqualInProcess(['replay', 'config.yaml'], dir);
      outcomes.set(result.status ?? -1, (outcomes.get(result.status ?? -1) ?? 0) + 1);
      assert.ok(result.status === 0 || result.status === 1 || result.status === 2, `exit ${result.status}: ${result.stderr}`);
      if (result.status === 2) assert.match(result.stderr, /trace\.jsonl: line \d+: \S/, result.stderr);
    }),
    { numRuns: Number(process.env.KVQUAL_TRACE_MUTATIONS ?? 150), seed: Number(process.env.KVQUAL_TRACE_MUTATION_SEED ?? 1893) },
  );
  rmSync(dir, { recursive: true, force: true });
  assert.ok((outcomes.get(0) ?? 0) > 0 && (outcomes.get(2) ?? 0) > 0, `both replayed and refused traces: ${JSON.stringify([...outcomes])}`);
});

test('a dependency cycle is named hop by hop, and a long one shows its first and last ten requests around how many were left out', () => {
  assert.equal(cycleText(['a', 'b', 'a']), 'a → b → a');
  const ring = [...Array.from({ length: 50_000 }, (_, i) => `r${i}`), 'r0'];
  assert.equal(cycleText(ring), `${ring.slice(0, 10).join(' → ')} → … (49,981 more) → ${ring.slice(-10).join(' → ')}`);
});
