// The author's loop: `npx cucumber-js features/x.feature[:line]` runs only what it names (the default
// profile's own paths give way to the command line's, cucumber.js), and `npx cucumber-js` alone runs
// the whole suite. Counted against the scenarios cucumber's own Gherkin compiler finds in the files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AstBuilder, compile, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin';
import { IdGenerator } from '@cucumber/messages';
import { ROOT } from '../support/paths';

const CUCUMBER = path.join(ROOT, 'node_modules', '.bin', 'cucumber-js');
const ONE_FILE = path.join('features', 'router', 'lag_visibility.feature');

/** The scenarios (pickles: one per Examples row) cucumber would make of one feature file. */
function scenariosIn(file: string): { name: string; line: number }[] {
  const newId = IdGenerator.incrementing();
  const document = new Parser(new AstBuilder(newId), new GherkinClassicTokenMatcher()).parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  const lines = new Map<string, number>();
  const walk = (children: readonly { scenario?: { id: string; location: { line: number }; examples: readonly { tableBody: readonly { id: string; location: { line: number } }[] }[] }; rule?: { children: readonly unknown[] } }[]) => {
    for (const child of children) {
      if (child.rule) walk(child.rule.children as never);
      if (!child.scenario) continue;
      lines.set(child.scenario.id, child.scenario.location.line);
      for (const row of child.scenario.examples.flatMap((examples) => examples.tableBody)) lines.set(row.id, row.location.line);
    }
  };
  walk((document.feature?.children ?? []) as never);
  return compile(document, file, newId).map((pickle) => ({ name: pickle.name, line: lines.get(pickle.astNodeIds.at(-1)!)! }));
}

function featureFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return featureFiles(relative);
    return entry.name.endsWith('.feature') ? [relative] : [];
  });
}

/** Runs cucumber-js as `npx cucumber-js …` does, steps not executed (`--dry-run`) unless asked. */
function cucumber(args: string[]) {
  const result = spawnSync(CUCUMBER, ['--format', 'summary', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  const output = `${result.stdout}${result.stderr}`;
  const counted = /^(\d+) scenarios? \(/m.exec(output);
  assert.ok(counted, `cucumber printed no scenario count:\n${output}`);
  return { status: result.status, output, scenarios: Number(counted[1]) };
}

test('one feature file given on the command line runs alone, with no warning about merged paths', () => {
  const expected = scenariosIn(ONE_FILE).length;
  assert.ok(expected > 1, 'the chosen file has several scenarios');
  const run = cucumber([ONE_FILE]);
  assert.equal(run.status, 0, run.output);
  assert.equal(run.scenarios, expected, run.output);
  assert.match(run.output, new RegExp(`^${expected} scenarios \\(${expected} passed\\)$`, 'm'));
  assert.doesNotMatch(run.output, /specified paths in both/);
});

test('file:line runs the one scenario on that line; a folder runs only its own files', () => {
  const [, second] = scenariosIn(ONE_FILE);
  const one = cucumber([`${ONE_FILE}:${second.line}`]);
  assert.equal(one.status, 0, one.output);
  assert.match(one.output, /^1 scenario \(1 passed\)$/m);

  const folder = path.join('features', 'blocks');
  const inFolder = featureFiles(folder).flatMap(scenariosIn).length;
  const run = cucumber(['--dry-run', folder]);
  assert.equal(run.scenarios, inFolder, run.output);
});

test('with no path the default profile runs the whole suite; ts-node and replay run only what they are given', () => {
  const suite = featureFiles('features').flatMap(scenariosIn).length;
  assert.equal(cucumber(['--dry-run']).scenarios, suite);
  assert.equal(cucumber(['--dry-run', '--profile', 'ts-node', ONE_FILE]).scenarios, scenariosIn(ONE_FILE).length);
  assert.equal(cucumber(['--dry-run', '--profile', 'replay', ONE_FILE]).scenarios, scenariosIn(ONE_FILE).length);
});
