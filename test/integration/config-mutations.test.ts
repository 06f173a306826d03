// Generated bad and odd configs: the example configs with one or two values changed (a number
// scaled, zeroed, negated or made huge, a value of the wrong type, a key removed, an unknown key
// added), replayed through the command line in this process. Whatever the mutation, kvqual either
// replays it (exit 0 or 1) or refuses it (exit 2) with a message naming the file, never an
// internal error or a stack trace, and a refused config leaves no report behind. The hand-written
// corpus (bad-inputs.test.ts) names the known cases; this finds the ones nobody wrote down.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { ROOT } from '../support/paths';
import { kvqualInProcess } from '../support/cli';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-config-mutations-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const MOONCAKE = path.join(ROOT, '..', 'shared', 'data', 'mooncake', 'conversation_trace.jsonl');
const RUNS = 200;
/** A mutated config that replays takes well under this (they are the small examples, changed). */
/** A case that takes longer hangs or blows up: a guard, not a measure of speed (generous for loaded CI machines). */
const CASE_LIMIT_MS = 30_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Step = string | number;

/** The example configs, with their traces beside them in the scratch folder (the Mooncake ones on its first 40 rows, when ../shared has it). */
function bases(): { name: string; config: Json }[] {
  fs.copyFileSync(path.join(ROOT, 'examples', 'agentic', 'coding-agent.jsonl'), path.join(scratch, 'coding-agent.jsonl'));
  fs.copyFileSync(path.join(ROOT, 'examples', 'configs', 'pass-times-example.csv'), path.join(scratch, 'pass-times-example.csv'));
  const withMooncake = fs.existsSync(MOONCAKE);
  if (withMooncake) fs.writeFileSync(path.join(scratch, 'trace.jsonl'), `${fs.readFileSync(MOONCAKE, 'utf8').split('\n').slice(0, 40).join('\n')}\n`);
  const files = [...fs.readdirSync(path.join(ROOT, 'examples', 'configs')).filter((f) => f.endsWith('.yaml')).map((f) => path.join('configs', f)), path.join('agentic', 'two-lanes-shared.yaml')].sort();
  return files
    .map((file) => ({ name: file, config: parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as Json }))
    .filter(({ config }) => withMooncake || !(config as { workload: { mooncake?: unknown } }).workload.mooncake)
    .map(({ name, config }) => {
      const workload = (config as { workload: Record<string, Record<string, Json>> }).workload;
      if (workload.mooncake) workload.mooncake = { ...workload.mooncake, trace: 'trace.jsonl', max_requests: 40 };
      if (workload.agentic) workload.agentic = { ...workload.agentic, trace: 'coding-agent.jsonl' };
      return { name, config };
    });
}

/** Every path to a value in a config, parents before children. */
function paths(value: Json, at: Step[] = [], out: Step[][] = []): Step[][] {
  if (value === null || typeof value !== 'object') return out;
  for (const [key, child] of Object.entries(value)) {
    const step: Step = Array.isArray(value) ? Number(key) : key;
    out.push([...at, step]);
    paths(child, [...at, step], out);
  }
  return out;
}

const ODD_VALUES: Json[] = [0, -1, 0.5, 1e-9, 1e300, 2 ** 53, -0.25, '', 'x', 'NaN', null, [], {}, true];

interface Mutation {
  /** Which path (taken modulo the number of paths of the config as it is then). */
  at: number;
  kind: 'scale' | 'odd' | 'remove' | 'add';
  factor: number;
  odd: number;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom<Mutation['kind']>('scale', 'scale', 'scale', 'scale', 'odd', 'remove', 'add'),
  factor: fc.constantFrom(0, -1, 0.5, 2, 3, 10, 0.1, 1e-6, 1e6),
  odd: fc.nat({ max: ODD_VALUES.length - 1 }),
});

function valueAt(config: Json, at: readonly Step[]): Json {
  let value = config;
  for (const step of at) value = (value as Record<Step, Json>)[step];
  return value;
}

function mutated(base: Json, mutations: readonly Mutation[]): Json {
  const config = structuredClone(base);
  for (const change of mutations) {
    // A number is scaled (wherever it is); anything may be replaced, removed or given a sibling.
    const all = paths(config).filter((at) => change.kind !== 'scale' || typeof valueAt(config, at) === 'number');
    if (all.length === 0) break;
    const where = all[change.at % all.length];
    let parent = config as Record<Step, Json>;
    for (const step of where.slice(0, -1)) parent = parent[step] as Record<Step, Json>;
    const key = where[where.length - 1];
    const value = parent[key];
    if (change.kind === 'remove' && !Array.isArray(parent)) delete parent[key];
    else if (change.kind === 'add' && value !== null && typeof value === 'object' && !Array.isArray(value)) value.not_a_setting = 1;
    else if (change.kind === 'scale' && typeof value === 'number') parent[key] = value * change.factor;
    else parent[key] = ODD_VALUES[change.odd];
  }
  return config;
}

test(`${RUNS} mutated example configs are replayed or refused with a message, never an internal error, and a refused one writes nothing`, (t) => {
  const examples = bases();
  assert.ok(examples.length >= 4, `${examples.length} example configs`);
  const statuses = new Map<number | null, number>();
  let n = 0;
  fc.assert(
    fc.property(fc.nat({ max: examples.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 2 }), (which, mutations) => {
      const base = examples[which];
      const file = path.join(scratch, `case-${n}.yaml`);
      const out = path.join(scratch, `report-${n++}.json`);
      fs.writeFileSync(file, stringify(mutated(base.config, mutations)));
      const started = Date.now();
      const run = kvqualInProcess(['replay', file, '--out', out], scratch);
      const elapsed = Date.now() - started;
      const context = `${base.name} with ${JSON.stringify(mutations)}:\n${run.stderr}`;
      statuses.set(run.status, (statuses.get(run.status) ?? 0) + 1);
      assert.ok(run.status === 0 || run.status === 1 || run.status === 2, `exit ${run.status}, ${context}`);
      assert.doesNotMatch(run.stderr, /internal error/, context);
      assert.doesNotMatch(run.stderr, /^\s+at .+(:\d+:\d+\)?|\(native\))$/m, `no stack trace: ${context}`);
      if (run.status === 2) {
        assert.match(run.stderr, /^kvqual replay: /, context);
        assert.ok(run.stderr.includes(file), `the message names the file: ${context}`);
        assert.equal(fs.existsSync(out), false, `no report for a refused config: ${context}`);
      }
      assert.ok(elapsed < CASE_LIMIT_MS, `took ${elapsed} ms: ${context}`);
      fs.rmSync(out, { force: true });
      fs.rmSync(file);
    }),
    { numRuns: RUNS, seed: 1893 },
  );
  t.diagnostic(`exit statuses: ${[...statuses].sort().map(([status, count]) => `${count} × ${status}`).join(', ')}`);
  // Both outcomes happen: the mutations neither all break the config nor all leave it valid.
  assert.ok((statuses.get(0) ?? 0) > RUNS / 20 && (statuses.get(2) ?? 0) > RUNS / 2, JSON.stringify([...statuses]));
});

/** Text put into a config's YAML: anchors and aliases, tags, flow brackets, quotes, odd scalars, stray characters. */
const YAML_SNIPPETS = ['&a', '*a', '<<: *a', '!!binary', '!!js/function "x"', '!!str', '? ', ': ', '- ', '{', '}', '[', ']', '"', "'", '#', '\t', '\u0000', '\ufeff', '|', '>', '~', '.inf', '.nan', '0x1F', '1_000', '2001-12-14', 'yes', '1e999', '18446744073709551616', '%YAML 1.1', '---', '...', '@', '`'];

test(`${RUNS} example configs mutated as YAML text are replayed or refused with a message, never an internal error or a console warning`, (t) => {
  const texts = fs.readdirSync(path.join(ROOT, 'examples', 'configs')).filter((f) => f.endsWith('.yaml') && !f.startsWith('mooncake')).map((f) => fs.readFileSync(path.join(ROOT, 'examples', 'configs', f), 'utf8').split('\n'));
  const edit = fc.record({ kind: fc.integer({ min: 0, max: 3 }), line: fc.nat(), at: fc.nat(), text: fc.constantFrom(...YAML_SNIPPETS), other: fc.nat() });
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  const statuses = new Map<number | null, number>();
  try {
    fc.assert(
      fc.property(fc.nat({ max: texts.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 3 }), (which, edits) => {
        const lines = [...texts[which]];
        for (const e of edits) {
          const i = e.line % lines.length;
          const at = e.at % (lines[i].length + 1);
          if (e.kind === 0) lines[i] = lines[i].slice(0, at) + e.text + lines[i].slice(at);
          else if (e.kind === 1) lines[i] = lines[i].slice(0, at) + lines[i].slice(at + 1 + (e.other % 5));
          else if (e.kind === 2) lines.splice(i, 0, lines[e.other % lines.length]);
          else lines[i] = lines[i].replace(/:\s*(\S.*)$/, `: ${e.text}`);
        }
        const file = path.join(scratch, 'text-case.yaml');
        fs.writeFileSync(file, lines.join('\n'));
        const run = kvqualInProcess(['replay', file], scratch);
        statuses.set(run.status, (statuses.get(run.status) ?? 0) + 1);
        const context = `${JSON.stringify(edits)}:\n${run.stderr}`;
        assert.ok(run.status === 0 || run.status === 1 || run.status === 2, `exit ${run.status}, ${context}`);
        assert.doesNotMatch(run.stderr, /internal error|^\s+at .+:\d+:\d+\)?$/m, context);
        assert.deepEqual(warnings, [], `no warning on the console: ${context}`);
      }),
      { numRuns: RUNS, seed: 1893 },
    );
  } finally {
    process.off('warning', onWarning);
  }
  t.diagnostic(`exit statuses: ${[...statuses].sort().map(([status, count]) => `${count} × ${status}`).join(', ')}`);
  assert.ok((statuses.get(0) ?? 0) > 0 && (statuses.get(2) ?? 0) > RUNS / 2, JSON.stringify([...statuses]));
});
