// Tests of the pass-time models (fixed, linear, table): hand-computed durations, rounding up to a
// whole nanosecond, interpolation and extrapolation, config validation, the fidelity label, and a
// replay whose request times follow the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { passDurationNs, PassShape, TablePassTime } from '../../src/engine/passTime';
import { ConfigError, parseReplayConfig } from '../../src/config/load';
import { fidelityOf, passTimeModel } from '../../src/config/build';
import { runReplay } from '../../src/replay';
import type { ReplayConfig } from '../../src/config/schema';
import { VirtualClockError } from '../../src/time';

const shape = (prefill_tokens: number, decode_sequences: number, context_tokens: number, decode_context_tokens = 0, has_prefill = prefill_tokens > 0): PassShape => ({
  has_prefill,
  prefill_tokens,
  decode_sequences,
  context_tokens,
  decode_context_tokens,
});

test('ENG-2: the fixed model adds prefill_ms for any prefill chunk and decode_ms for any decode step, whatever the batch', () => {
  const fixed = passTimeModel({ fixed: { prefill_ms: 2, decode_ms: 0.5 } }, 't');
  assert.equal(passDurationNs(fixed, shape(10, 0, 10)), 2_000_000);
  assert.equal(passDurationNs(fixed, shape(12_000, 0, 12_000)), 2_000_000);
  assert.equal(passDurationNs(fixed, shape(0, 32, 3200, 3200)), 500_000);
  assert.equal(passDurationNs(fixed, shape(5, 1, 105, 100)), 2_500_000);
});

test('a pass longer than the virtual clock is refused as the input\'s: its shape and length named', () => {
  const linear = passTimeModel({ linear: { base_ms: 0, prefill_token_ms: 60_000, decode_seq_ms: 0, context_token_ms: 0 } }, 't');
  assert.throws(
    () => passDurationNs(linear, shape(200_000, 0, 200_000)),
    (error: unknown) => error instanceof VirtualClockError && /: a pass of 200000 prefill tokens and 0 decode sequences would last 138\.9 days; shorten/.test(error.message),
  );
  assert.equal(passDurationNs(linear, shape(150_000, 0, 150_000)), 9_000_000_000_000_000, '104.2 days is still on the clock');
});

test('linear: base + per new token + per decode sequence + per context token, rounded up to a whole ns', () => {
  const linear = passTimeModel({ linear: { base_ms: 1.5, prefill_token_ms: 0.0001, decode_seq_ms: 0.02, context_token_ms: 0.0000001 } }, 't');
  // 1.5 ms + 400 × 100 ns + 0 + 400 × 0.1 ns = 1,500,000 + 40,000 + 40 ns
  assert.equal(passDurationNs(linear, shape(400, 0, 400)), 1_540_040);
  // 32 decode sequences of 1,000 context tokens each: 1.5 ms + 32 × 20 µs + 32,000 × 0.1 ns
  assert.equal(passDurationNs(linear, shape(0, 32, 32_000, 32_000)), 1_500_000 + 640_000 + 3_200);
  // 3 context tokens × 0.1 ns = 0.3 ns: rounded up to 1 ns (TIME-2)
  assert.equal(passDurationNs(linear, shape(0, 0, 3, 0, true)), 1_500_001);
  const zero = passTimeModel({ linear: { base_ms: 0, prefill_token_ms: 0, decode_seq_ms: 0, context_token_ms: 0 } }, 't');
  assert.equal(passDurationNs(zero, shape(10, 0, 10)), 1, 'a pass never takes 0 ns');
});

const TABLE = {
  table: {
    prefill: [
      { tokens: 400, ms: 20 },
      { tokens: 4000, ms: 110 },
      { tokens: 8000, ms: 250 },
    ],
    decode: [
      { batch_size: 1, context_tokens: 1000, ms: 5 },
      { batch_size: 1, context_tokens: 3000, ms: 7 },
      { batch_size: 32, context_tokens: 1000, ms: 9 },
      { batch_size: 32, context_tokens: 3000, ms: 15 },
    ],
  },
};

test('table: prefill points are exact, interpolated between, extrapolated from the two end points', () => {
  const table = passTimeModel(TABLE, 't');
  assert.equal(passDurationNs(table, shape(400, 0, 400)), 20_000_000);
  assert.equal(passDurationNs(table, shape(4000, 0, 4000)), 110_000_000);
  assert.equal(passDurationNs(table, shape(2200, 0, 2200)), 65_000_000, 'half way from 400 to 4,000 tokens');
  assert.equal(passDurationNs(table, shape(12_000, 0, 12_000)), 390_000_000, 'beyond 8,000: the 4,000 → 8,000 slope of 35 µs per token');
  assert.equal(passDurationNs(table, shape(200, 0, 200)), 15_000_000, 'below 400: the 400 → 4,000 slope of 25 µs per token');
  // 401 tokens: 20 ms + 90 ms / 3,600 = 20,025,000 ns exactly
  assert.equal(passDurationNs(table, shape(401, 0, 401)), 20_025_000);
  const steep = passTimeModel({ table: { prefill: [{ tokens: 1, ms: 0.000001 }, { tokens: 4, ms: 0.000003 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 1 }] } }, 't');
  // 2 tokens: 1 + 2/3 ns → 2 ns (rounded up)
  assert.equal(passDurationNs(steep, shape(2, 0, 2)), 2);
});

test('table: decode is bilinear over batch size and mean context per sequence; a mixed pass adds both parts', () => {
  const table = passTimeModel(TABLE, 't') as TablePassTime;
  assert.deepEqual(table.decode_batch_sizes, [1, 32]);
  assert.equal(passDurationNs(table, shape(0, 1, 1000, 1000)), 5_000_000);
  assert.equal(passDurationNs(table, shape(0, 32, 32_000, 32_000)), 9_000_000);
  assert.ok(passDurationNs(table, shape(0, 32, 32_000, 32_000)) > passDurationNs(table, shape(0, 1, 1000, 1000)));
  // mean context 2,000 (half way): batch 1 → 6 ms, batch 32 → 12 ms
  assert.equal(passDurationNs(table, shape(0, 1, 2000, 2000)), 6_000_000);
  assert.equal(passDurationNs(table, shape(0, 32, 64_000, 64_000)), 12_000_000);
  // batch 63 (extrapolated: 31 more than 32), context 1,000: 9 + 4 × 31/31 = 13 ms
  assert.equal(passDurationNs(table, shape(0, 63, 63_000, 63_000)), 13_000_000);
  // mixed: 400 prefill tokens + one decode step at context 1,000
  assert.equal(passDurationNs(table, shape(400, 1, 1400, 1000)), 25_000_000);
});

test('table: on a 3 × 3 decode grid, each axis takes the segment its value falls in, and the mean context is the total over the sequences', () => {
  const grid: [number, number[]][] = [
    [1, [4, 6, 12]],
    [8, [5, 8, 16]],
    [32, [9, 14, 30]],
  ];
  const contexts = [512, 2048, 8192];
  const decode = grid.flatMap(([batch_size, ms]) => ms.map((value, i) => ({ batch_size, context_tokens: contexts[i], ms: value })));
  const table = passTimeModel({ table: { prefill: [{ tokens: 1, ms: 1 }], decode } }, 't');
  const decodeNs = (sequences: number, contextTotal: number) => passDurationNs(table, shape(0, sequences, contextTotal, contextTotal));
  // Expected values: bilinear interpolation in exact fractions, rounded up to a whole ns.
  // 8 sequences, mean context 4,096 (a third of the way from 2,048 to 8,192): 8 + 8 / 3 ms.
  assert.equal(decodeNs(8, 8 * 4096), 10_666_667);
  // 20 sequences (half way from 8 to 32), mean context 1,024 (a third of the way from 512 to 2,048): (6 + 32 / 3) / 2 ms.
  assert.equal(decodeNs(20, 20 * 1024), 8_333_334);
  // 3 sequences, 5,000 tokens (mean 1,666⅔): both axes off the grid and the mean not a whole number.
  assert.equal(decodeNs(3, 5000), 6_003_969);
  // Beyond both ends: one sequence of 10,000 tokens, 40 sequences of 9,000 (from the last segments' slopes).
  assert.equal(decodeNs(1, 10_000), 13_765_625);
  assert.equal(decodeNs(40, 40 * 9000), 37_121_528);
});

const CONFIG = (timing: string, requests: string, tokensPerPass = 8192) => `
cluster:
  workers:
    - role: aggregated
      engine: { block_size: 16, num_gpu_blocks: 4096, max_num_seqs: 64, max_num_batched_tokens: ${tokensPerPass}, timing: ${timing} }
workload:
  requests:
${requests}
`;

function problemsOf(text: string): string[] {
  try {
    parseReplayConfig(text, 'test.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.problems.map((p) => `${p.path}: ${p.message}`);
  }
  assert.fail('the config was accepted');
}

const ONE = '    - { id: r, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 2 }';

test('bad timing configs are refused with the field and the problem', () => {
  assert.match(problemsOf(CONFIG('{ fixed: { prefill_ms: 1, decode_ms: 1 }, linear: { base_ms: 1, prefill_token_ms: 0, decode_seq_ms: 0, context_token_ms: 0 } }', ONE)).join('\n'), /timing/);
  assert.match(problemsOf(CONFIG('{ linear: { base_ms: 1, prefill_token_ms: 0.0000000001, decode_seq_ms: 0, context_token_ms: 0 } }', ONE)).join('\n'), /prefill_token_ms.*9 decimals/);
  assert.match(problemsOf(CONFIG('{ linear: { base_ms: -1, prefill_token_ms: 0, decode_seq_ms: 0, context_token_ms: 0 } }', ONE)).join('\n'), /base_ms must be ≥ 0/);
  assert.match(
    problemsOf(CONFIG('{ table: { prefill: [{ tokens: 400, ms: 2 }, { tokens: 400, ms: 3 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 1 }] } }', ONE)).join('\n'),
    /strictly increasing tokens/,
  );
  assert.match(
    problemsOf(CONFIG('{ table: { prefill: [{ tokens: 400, ms: 2 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 1 }, { batch_size: 2, context_tokens: 5, ms: 1 }] } }', ONE)).join('\n'),
    /not a full grid: batch_size 1 has no point at context_tokens 5/,
  );
  assert.match(problemsOf(CONFIG('{ table: { prefill: [], decode: [{ batch_size: 1, context_tokens: 1, ms: 1 }] } }', ONE)).join('\n'), /at least one point/);
});

test('fidelity: functional for fixed, calibrated: <source> when the model names one, uncalibrated otherwise', () => {
  const of = (timing: string) => fidelityOf(parseReplayConfig(CONFIG(timing, ONE), 't.yaml') as ReplayConfig);
  assert.equal(of('{ fixed: { prefill_ms: 1, decode_ms: 1 } }'), 'functional');
  assert.equal(of('{ linear: { base_ms: 1, prefill_token_ms: 0, decode_seq_ms: 0, context_token_ms: 0, source: "BLIS fit, H100" } }'), 'calibrated: BLIS fit, H100');
  assert.equal(of('{ table: { prefill: [{ tokens: 4, ms: 1 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 1 }] } }'), 'uncalibrated table model (no source named)');
});

test('a replay under the table model: TTFT follows the prefill points, and a long prompt is chunked at the token budget', () => {
  const timing = JSON.stringify(TABLE.table).replace(/"(\w+)":/g, '$1: ');
  const requests = [
    '    - { id: short, arrival_ms: 0, prompt: [{ tokens: 400 }], output_length: 1 }',
    '    - { id: long, arrival_ms: 1000, prompt: [{ tokens: 4000 }], output_length: 1 }',
    '    - { id: chunked, arrival_ms: 2000, prompt: [{ tokens: 9000 }], output_length: 1 }',
  ].join('\n');
  const config = parseReplayConfig(CONFIG(`{ table: ${timing} }`, requests, 4000), 't.yaml');
  const shapes: { prefill_tokens: number; duration_ns: number }[] = [];
  const { report } = runReplay(config, {
    observe: (cluster) => {
      for (const rank of cluster.ranks) rank.passObserver = (_, pass) => shapes.push({ prefill_tokens: pass.shape.prefill_tokens, duration_ns: pass.duration_ns });
    },
  });
  const ttft = Object.fromEntries(report.per_request.map((r) => [r.request_id, r.ttft_ms]));
  assert.equal(ttft.short, 20);
  assert.equal(ttft.long, 110);
  assert.deepEqual(shapes.map((s) => s.prefill_tokens), [400, 4000, 4000, 4000, 1000]);
  assert.equal(ttft.chunked, 110 + 110 + 35, "two full chunks of 4,000 tokens, then 1,000 tokens at 20 + 90 × 600 / 3,600 ms");
  assert.equal(report.summary.fidelity, 'uncalibrated table model (no source named)');
  assert.equal(runReplay(config).report.digest, report.digest, 'same config, same digest');
});

test('table: a mixed pass is its exact prefill part plus its exact decode part, rounded up once; a part extrapolated below zero counts as nothing, never against the other', () => {
  // 4/3 ns + 4/3 ns = 8/3 ns → 3 ns (rounding each part first gave 2 + 2 = 4).
  const thirds = passTimeModel({ table: { prefill: [{ tokens: 0, ms: 0 }, { tokens: 3, ms: 0.000004 }], decode: [{ batch_size: 1, context_tokens: 0, ms: 0 }, { batch_size: 1, context_tokens: 3, ms: 0.000004 }] } }, 't');
  assert.equal(passDurationNs(thirds, shape(1, 0, 1)), 2, 'the prefill part alone: 4/3 ns → 2 ns');
  assert.equal(passDurationNs(thirds, shape(1, 1, 2, 1)), 3, 'both parts: 8/3 ns → 3 ns');
  // Prefill points (8 tokens, 2 ms) and (16, 6 ms): 1 token extrapolates to −1.5 ms, which must not shorten a 0.7 ms decode step.
  const steep = passTimeModel({ table: { prefill: [{ tokens: 8, ms: 2 }, { tokens: 16, ms: 6 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 0.7 }] } }, 't');
  assert.equal(passDurationNs(steep, shape(1, 0, 1)), 1, 'the prefill part alone: the 1 ns floor');
  assert.equal(passDurationNs(steep, shape(1, 1, 2, 1)), 700_000, 'the decode step takes its 0.7 ms, the negative prefill part nothing');
});
