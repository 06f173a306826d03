// Traces mutated as text (a key given twice, a number written oddly or out of range, a character
// cut or added, two lines swapped), Mooncake and agentic (as the spec and as AISimulate write them),
// replayed through the command line: each is replayed or refused with the file, the line and the
// problem, never an internal error or a stack, and within a few seconds. At 1,000 mutations this
// found an internal error (hash_ids given twice, the last with an id above 2^53: lossless-json
// refuses what JSON.parse accepts); the bad-input corpus keeps those two cases (duplicate-key-big-id).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ROOT } from '../support/paths';
import { kvqualInProcess } from '../support/cli';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-trace-mutations-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Mutations a run, for each kind of trace (KVQUAL_TRACE_TEXT_MUTATIONS=N runs more). */
const RUNS = Number(process.env.KVQUAL_TRACE_TEXT_MUTATIONS ?? 150);
/** A case that takes longer hangs or blows up: a guard, not a measure of speed (generous for loaded CI machines). */
const CASE_LIMIT_MS = 30_000;

const ODD_NUMBERS = ['1e999', '-0', '1.5', '-1', '0e5', '5.0', '1E+2', '1e20', '9007199254740993', '18446744073709551615', '18446744073709551616', '1' + '0'.repeat(400)];
const ODD_CHARACTERS = ['\u0000', '\u2028', '"', '\\', '{', ']', ',', ' ', 'é', '\ud800'];

type Mutation =
  | { kind: 'duplicate-key'; line: number; pick: number; value: string; last: boolean }
  | { kind: 'number'; line: number; pick: number; value: string }
  | { kind: 'cut'; line: number; at: number }
  | { kind: 'insert'; line: number; at: number; text: string }
  | { kind: 'swap'; line: number; other: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('duplicate-key' as const), line: fc.nat(), pick: fc.nat(), value: fc.constantFrom(...ODD_NUMBERS, '"x"', 'null', '[]', '[18446744073709551615]'), last: fc.boolean() }),
  fc.record({ kind: fc.constant('number' as const), line: fc.nat(), pick: fc.nat(), value: fc.constantFrom(...ODD_NUMBERS) }),
  fc.record({ kind: fc.constant('cut' as const), line: fc.nat(), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), line: fc.nat(), at: fc.nat(), text: fc.constantFrom(...ODD_CHARACTERS) }),
  fc.record({ kind: fc.constant('swap' as const), line: fc.nat(), other: fc.nat() }),
);

function apply(lines: string[], m: Mutation): void {
  const at = m.line % lines.length;
  const text = lines[at];
  if (m.kind === 'duplicate-key') {
    const keys = [...text.matchAll(/"(\w+)"\s*:/g)].map((match) => match[1]);
    // Given again first, JSON.parse keeps the original; given again last, it keeps the new value.
    const key = keys[m.pick % Math.max(keys.length, 1)];
    if (keys.length > 0) lines[at] = m.last ? text.replace(/}\s*$/, `, "${key}": ${m.value}}`) : text.replace('{', `{"${key}": ${m.value}, `);
  } else if (m.kind === 'number') {
    const numbers = [...text.matchAll(/(?<=[:\[,]\s*)-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)];
    if (numbers.length > 0) {
      const found = numbers[m.pick % numbers.length];
      lines[at] = text.slice(0, found.index) + m.value + text.slice(found.index! + found[0].length);
    }
  } else if (m.kind === 'cut') lines[at] = text.slice(0, m.at % (text.length + 1)) + text.slice((m.at % (text.length + 1)) + 1);
  else if (m.kind === 'insert') lines[at] = text.slice(0, m.at % (text.length + 1)) + m.text + text.slice(m.at % (text.length + 1));
  else {
    const other = m.other % lines.length;
    [lines[at], lines[other]] = [lines[other], lines[at]];
  }
}

function check(kind: string, config: string, trace: string[]): void {
  fs.writeFileSync(path.join(scratch, `${kind}.yaml`), config);
  fs.writeFileSync(path.join(scratch, `${kind}.jsonl`), `${trace.join('\n')}\n`);
  const unmutated = kvqualInProcess(['replay', `${kind}.yaml`], scratch);
  assert.equal(unmutated.status, 0, `the unmutated ${kind} trace replays: ${unmutated.stderr}`);
  const statuses = new Map<number | null, number>();
  fc.assert(
    fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
      const lines = [...trace];
      for (const m of mutations) apply(lines, m);
      fs.writeFileSync(path.join(scratch, `${kind}.jsonl`), `${lines.join('\n')}\n`);
      const started = Date.now();
      const run = kvqualInProcess(['replay', `${kind}.yaml`], scratch);
      const context = `${kind} with ${JSON.stringify(mutations)}:\n${run.stderr}`;
      statuses.set(run.status, (statuses.get(run.status) ?? 0) + 1);
      assert.ok(run.status === 0 || run.status === 1 || run.status === 2, `exit ${run.status}, ${context}`);
      assert.doesNotMatch(run.stderr, /internal error/, context);
      assert.doesNotMatch(run.stderr, /^\s+at .+(:\d+:\d+\)?|\(native\))$/m, `no stack trace: ${context}`);
      if (run.status === 2) assert.match(run.stderr, new RegExp(`${kind}\\.jsonl: line \\d+: \\S`), context);
      assert.ok(Date.now() - started < CASE_LIMIT_MS, `took ${Date.now() - started} ms: ${context}`);
    }),
    { numRuns: RUNS, seed: Number(process.env.KVQUAL_TRACE_TEXT_MUTATION_SEED ?? 1893) },
  );
  assert.ok((statuses.get(0) ?? 0) > 0 && (statuses.get(2) ?? 0) > RUNS / 4, `${kind}: ${JSON.stringify([...statuses])}`);
}

const ENGINE = 'engine: { block_size: 4, num_gpu_blocks: 64, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }';

test(`${RUNS} Mooncake traces mutated as text are replayed or refused naming file and line, never an internal error`, () => {
  const rows = Array.from({ length: 8 }, (_, i) => `{"timestamp": ${i * 5}, "input_length": ${20 + i}, "output_length": ${1 + (i % 3)}, "hash_ids": [0, ${i + 1}]}`);
  const config = `cluster:\n  workers:\n    - role: aggregated\n      replicas: 2\n      ${ENGINE}\nrouter: { kv_event_lag_ms: 0 }\nworkload:\n  trace_block_size: 16\n  mooncake: { trace: mooncake.jsonl }\n`;
  check('mooncake', config, rows);
});

for (const [writer, file] of [
  ['the spec', 'coding-agent.jsonl'],
  ['AISimulate', 'coding-agent.aisimulate.jsonl'],
] as const) {
  test(`${RUNS} agentic traces as ${writer} writes them, mutated as text, are replayed or refused naming file and line, never an internal error`, () => {
    const config = fs.readFileSync(path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml'), 'utf8').replace('trace: coding-agent.jsonl', 'trace: agentic.jsonl');
    check('agentic', config, fs.readFileSync(path.join(ROOT, 'examples', 'agentic', file), 'utf8').trim().split('\n'));
  });
}
