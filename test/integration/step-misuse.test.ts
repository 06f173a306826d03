// Steps never crash on misuse: random sequences of the catalogue's own example lines (one real line
// of features/ per step, with its table), in any order and mixing the two levels, run through the
// step definitions as cucumber loads them (parameter types, the failure wrapper and the level guard
// included) on a fresh World each. Every step either works or fails plainly: with a claim that did
// not hold (an assertion, turned into a plain sentence), or with one sentence of its own that names
// what is missing — never a TypeError, a message about `undefined`, or a name from the code. The two
// skeletons docs/steps.md gives pass as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfiguration, runCucumber } from '@cucumber/cucumber/api';
import { ROOT } from '../support/paths';
import { DataTable } from '@cucumber/cucumber';
import { loadCatalogue, SKELETONS, type Catalogue, type Entry } from '../../scripts/steps-doc';
import type { KvWorld } from '../../steps/support/world';

interface Line {
  keyword: string;
  text: string;
  table: string[][] | null;
}

/** Every real scenario of features/, as its lines in order. */
function scenarios(entries: Entry[]): Line[][] {
  const byScenario = new Map<string, { line: number; step: Line }[]>();
  for (const entry of entries.filter((e) => e.info.domain !== 'fuzzer')) {
    for (const use of entry.uses) {
      const steps = byScenario.get(use.scenario) ?? [];
      steps.push({ line: use.line, step: { keyword: use.keyword, text: use.text, table: use.table } });
      byScenario.set(use.scenario, steps);
    }
  }
  return [...byScenario.values()].map((steps) => steps.sort((a, b) => a.line - b.line).map((s) => s.step));
}

/** What the message of an error a step threw is not, when it is not plain; null when it is plain. */
export function notPlain(error: unknown): string | null {
  if (!(error instanceof Error)) return `a thrown ${typeof error}, not an Error`;
  const message = error.message;
  if (message.trim() === '') return 'an empty message';
  // A claim that did not hold: chai's assertion (its first line says what was checked), or the failure
  // wrapper's plain sentence with the assertion kept below it.
  if (error.name === 'AssertionError' || /\n\nAssertionError/.test(error.stack ?? '')) return internalMarker(message.split('\n')[0]);
  if (error.constructor !== Error) return `a ${error.name}, not a plain Error`;
  if (message.includes('\n')) return 'more than one line';
  if (message.length > 400) return 'longer than a sentence';
  return internalMarker(message);
}

const INTERNAL = /TypeError|ReferenceError|RangeError|Cannot read propert|is not a function|is not iterable|\bundefined\b|\bNaN\b|\[object |\b(?:this|world)\.\w|=>/;

function internalMarker(text: string): string | null {
  const found = INTERNAL.exec(text);
  return found === null ? null : `it shows "${found[0]}", a sign of the code, not of the scenario`;
}

const catalogue: Promise<Catalogue> = loadCatalogue();

/** A fresh scenario's World, as the loaded steps construct it (importing it here would define it outside a run). */
async function newWorld(): Promise<KvWorld> {
  const { World } = await catalogue;
  const noop = () => undefined;
  return new World({ attach: noop, log: noop, link: noop, parameters: {} }) as KvWorld;
}

function entryOf(entries: Entry[], text: string): Entry {
  const matching = entries.filter((entry) => entry.matches(text) !== null);
  assert.equal(matching.length, 1, `exactly one step matches "${text}"`);
  return matching[0];
}

/** Runs one line as cucumber would (its parameter types, its table), on this World. */
async function run(entries: Entry[], world: KvWorld, line: Line): Promise<void> {
  const entry = entryOf(entries, line.text);
  world.stepText = line.text;
  const args = entry.argumentsFor(line.text, world)!;
  if (line.table) args.push(new DataTable(line.table));
  await entry.code.apply(world, args);
}

/** What a cucumber run prints, collected. */
class Collected extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** The first failure of a sequence, with the line that failed, or null when every line worked. */
async function firstFailure(entries: Entry[], lines: readonly Line[]): Promise<{ line: Line; error: unknown } | null> {
  const world = await newWorld();
  for (const line of lines) {
    try {
      await run(entries, world, line);
    } catch (error) {
      return { line, error };
    }
  }
  return null;
}

/** One example line per step of the catalogue (fuzzer-only steps need a generated case's doc string: left out). */
function examples(entries: Entry[]): Line[] {
  return entries.filter((entry) => entry.info.domain !== 'fuzzer' && entry.uses.length > 0).map((entry) => ({ keyword: entry.uses[0].keyword, text: entry.uses[0].text, table: entry.uses[0].table }));
}

test('the plain-message check itself: plain sentences pass, crashes and code names fail', () => {
  assert.equal(notPlain(new Error("this step is engine-level, but this scenario is router-level since \"a cluster of 2 aggregated workers with 4-token blocks\": an engine-level scenario begins with 'Given a cluster of 2 aggregated workers with these settings:'")), null);
  assert.match(notPlain(new TypeError("Cannot read properties of undefined (reading 'routing_history')")) ?? '', /TypeError/);
  assert.match(notPlain(new Error("Cannot read properties of undefined (reading 'routing_history')")) ?? '', /Cannot read propert/);
  assert.match(notPlain(new Error('request undefined was never placed')) ?? '', /undefined/);
  assert.match(notPlain(new Error('this.engine.outcome is empty')) ?? '', /this\.e/);
  assert.match(notPlain('a string') ?? '', /not an Error/);
  assert.match(notPlain(new Error('')) ?? '', /empty/);
});

test('every step works or fails with a plain sentence, in any order and at any level (fast-check over the catalogue examples)', async () => {
  const { entries } = await catalogue;
  const lines = examples(entries);
  assert.ok(lines.length > 100, `${lines.length} example lines`);
  const seen = new Map<string, string>();
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...lines), { minLength: 1, maxLength: 6 }), async (sequence) => {
      const failure = await firstFailure(entries, sequence);
      if (failure === null) return;
      const problem = notPlain(failure.error);
      const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
      seen.set(message.split('\n')[0], failure.line.text);
      assert.equal(problem, null, `"${failure.line.keyword} ${failure.line.text}" after ${sequence.indexOf(failure.line)} other step(s) failed with a message that is not plain (${problem}):\n${failure.error instanceof Error ? failure.error.stack : message}\nsequence:\n${sequence.map((l) => `  ${l.keyword} ${l.text}`).join('\n')}`);
    }),
    { seed: 38, numRuns: 600, endOnFailure: true },
  );
  assert.ok(seen.size > 5, 'the sequences failed in several ways');
});

test('real scenarios cut and spliced (the start of one, a few random lines, the end of another) work or fail with a plain sentence', async () => {
  const { entries } = await catalogue;
  const lines = examples(entries);
  const real = scenarios(entries);
  assert.ok(real.length > 100, `${real.length} scenarios`);
  let worked = 0;
  const spliced = fc
    .tuple(fc.constantFrom(...real), fc.constantFrom(...real), fc.nat(), fc.nat(), fc.array(fc.constantFrom(...lines), { maxLength: 3 }))
    .map(([a, b, cutA, cutB, extra]) => [...a.slice(0, cutA % (a.length + 1)), ...extra, ...b.slice(cutB % (b.length + 1))]);
  await fc.assert(
    fc.asyncProperty(spliced, async (sequence) => {
      const failure = await firstFailure(entries, sequence);
      if (failure === null) return void worked++;
      const problem = notPlain(failure.error);
      assert.equal(problem, null, `"${failure.line.keyword} ${failure.line.text}" failed with a message that is not plain (${problem}):\n${failure.error instanceof Error ? failure.error.stack : String(failure.error)}\nsequence:\n${sequence.map((l) => `  ${l.keyword} ${l.text}`).join('\n')}`);
    }),
    { seed: 38, numRuns: 300, endOnFailure: true },
  );
  assert.ok(worked > 0, 'some spliced sequences run through');
});

test('every step of one level, run in a scenario of the other level, says so and how its own level begins', async () => {
  const { entries } = await catalogue;
  const lines = examples(entries);
  const router = entryOf(entries, 'a cluster of 2 aggregated workers with 4-token blocks');
  const engine = entryOf(entries, 'a cluster of 2 aggregated workers with the reference rank profile');
  for (const [opening, other] of [[router, 'engine'], [engine, 'router']] as const) {
    for (const line of lines.filter((l) => entryOf(entries, l.text).info.level === other)) {
      const failure = await firstFailure(entries, [{ keyword: 'Given', text: opening.uses[0].text, table: null }, line]);
      assert.ok(failure !== null && failure.line === line, `"${line.text}" should fail in a ${opening.info.level}-level scenario`);
      assert.match((failure.error as Error).message, new RegExp(`^this step is ${other}-level, but this scenario is ${opening.info.level}-level since "${opening.uses[0].text}": an? ${other}-level scenario begins with 'Given a cluster of 2 aggregated workers with `));
    }
  }
});

test('the skeletons docs/steps.md gives pass as written', async () => {
  const { entries } = await catalogue;
  for (const skeleton of Object.values(SKELETONS)) {
    const lines = skeleton.map((l) => /^\s+(Given|When|Then|And) (.+)$/.exec(l)).filter((m) => m !== null).map((m) => ({ keyword: m[1], text: m[2], table: null }));
    assert.ok(lines.length >= 4);
    const failure = await firstFailure(entries, lines);
    assert.equal(failure, null, failure ? `"${failure.line.text}": ${(failure.error as Error).message}` : '');
  }
});

test("an undefined step's message, in a real run, leads with the nearest steps of its scenario's level in words, cucumber's snippet below", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-undefined-'));
  try {
    const feature = path.join(dir, 'undefined.feature');
    fs.writeFileSync(feature, [
      '@AISIM-1893',
      'Feature: misspelt steps',
      '  Scenario: router-level',
      '    Given a cluster of 2 aggregated workers with 4-token blocks',
      '    Then it is placed on worker 1, the less loadd worker',
      '  Scenario: engine-level',
      '    Given a cluster of 2 aggregated workers with the reference rank profile',
      '    Then it is placed on worker 1 by lod',
      '',
    ].join('\n'));
    // `cucumber-js --profile replay FILE --format progress`, made in this process through cucumber's API on the steps loaded above.
    const { support } = await catalogue;
    const { runConfiguration } = await loadConfiguration({ profiles: ['replay'], provided: { paths: [feature], format: ['progress'] } }, { cwd: ROOT });
    const printed = new Collected();
    const { success } = await runCucumber({ ...runConfiguration, support }, { cwd: ROOT, stdout: printed, stderr: printed });
    const output = printed.text;
    assert.equal(success, false, output);
    assert.match(output, /No step matches "it is placed on worker …, the less loadd worker"\. Did you mean \(this scenario is router-level: steps that fit it first\):\n\s+- it is placed on worker <worker>, the less loaded worker {3}\(router-level\)\n/);
    assert.match(output, /No step matches "it is placed on worker … by lod"\. Did you mean \(this scenario is engine-level: steps that fit it first\):\n\s+- the resume is placed on worker <worker>[^\n]*\(engine-level\)\n/);
    assert.match(output, /docs\/steps\.md\.\n\s*\n\s*For developers, a new step definition would start as:\n\s*Then\('it is placed on worker \{int\}, the less loadd worker', function \(int\) \{/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
