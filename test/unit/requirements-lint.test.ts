// Unit tests of the requirement registry and the requirement-tag lint (scripts/lint-requirements.ts),
// on fixture features: inherited Rule / Examples / Feature tags count, untagged scenarios, unknown
// tags and uncovered requirements fail, planned requirements only warn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { lintRequirements, scenariosOf } from '../../scripts/lint-requirements';
import { parseRegistry, traceRequirements } from '../../src/signoff/requirements';
import { FIXTURES, ROOT } from '../support/paths';

const registry = path.join(FIXTURES, 'lint', 'requirements.yaml');

test('tags inherited from a Rule, an Examples block or the Feature trace a scenario', () => {
  const result = lintRequirements({ root: ROOT, features: path.join(FIXTURES, 'lint', 'tagged'), requirements: registry });
  assert.deepEqual(result.problems, []);
  const trace = result.trace!;
  assert.deepEqual(
    trace.rows.map((row) => [row.requirement.id, row.scenarios.map((s) => s.name)]),
    [
      ['AISIM-1893', ['tagged itself']],
      ['LAG-1', ['tagged by its rule']],
      ['MIR-2', ['tagged by its examples (1)', 'tagged by its examples (2)']],
      ['AISIM-1894', []],
    ],
  );
  assert.equal(trace.errors, 0);
  assert.deepEqual(trace.findings.map((f) => [f.severity, f.kind, f.requirement]), [['warning', 'planned-requirement', 'AISIM-1894']]);
  assert.equal(result.ok, true);
});

test('a scenario without a requirement tag, an unknown tag and an uncovered requirement fail the lint', () => {
  const result = lintRequirements({ root: ROOT, features: path.join(FIXTURES, 'lint', 'untagged'), requirements: registry });
  assert.equal(result.ok, false);
  const errors = result.trace!.findings.filter((f) => f.severity === 'error');
  assert.deepEqual(
    errors.map((f) => [f.kind, f.scenario ? `${path.basename(f.scenario.uri)}:${f.scenario.line}` : f.requirement]),
    [
      ['untraced-scenario', 'untagged.feature:6'],
      ['unknown-tag', 'untagged.feature:10'],
      ['untraced-scenario', 'untagged.feature:10'],
      ['untraced-scenario', 'untagged.feature:23'],
      ['uncovered-requirement', 'AISIM-1893'],
      ['uncovered-requirement', 'MIR-2'],
    ],
  );
  assert.match(errors[0].message, /untagged\.feature:6 "no requirement tag at all": no requirement tag/);
});

test('the lint script exits 1 on the untagged fixture, and the repository passes the lint', () => {
  const script = path.join(ROOT, 'scripts', 'lint-requirements.ts');
  const bad = spawnSync(process.execPath, ['--require', 'tsx/cjs', script, '--features', 'test/fixtures/lint/untagged', '--requirements', 'test/fixtures/lint/requirements.yaml'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(bad.status, 1, bad.stdout + bad.stderr);
  assert.match(bad.stdout, /error: .*no requirement tag at all/);
  // The repository with the script's defaults (`npm test` runs the script itself on it as well).
  const good = lintRequirements({ root: ROOT, features: 'features', requirements: 'requirements.yaml' });
  assert.deepEqual(good.problems, []);
  assert.equal(good.ok, true, JSON.stringify(good.trace?.findings.filter((f) => f.severity === 'error')));
});

test('a feature that does not parse is an error of the lint', () => {
  assert.throws(() => scenariosOf('broken.feature', 'Feature: x\n  Scenario: y\n    Given a step\n  Nonsense line\n'), /Nonsense line|expected/);
});

test('the registry is validated: ids, required fields, duplicates', () => {
  assert.throws(() => parseRegistry('requirements:\n  - { id: lag-1, title: t, source: s, owner: o }\n'), /id: an id looks like AISIM-1893/);
  assert.throws(() => parseRegistry('requirements:\n  - { id: LAG-1, title: t, source: s }\n'), /owner/);
  assert.throws(() => parseRegistry('requirements:\n  - { id: LAG-1, title: t, source: s, owner: o }\n  - { id: LAG-1, title: t, source: s, owner: o }\n'), /listed twice/);
  assert.equal(parseRegistry('requirements:\n  - { id: LAG-1, title: t, source: s, owner: o }\n').requirements[0].status, 'active');
  assert.throws(() => parseRegistry('requirements:\n  - ? { id: LAG-1 }\n    : x\n'), /requirements\.yaml: not valid YAML: a key must be a name, not a list or a map \(line 2, column 7\)/);
});

test('traceability is computed from any list of scenarios (e.g. a run\'s pickles)', () => {
  const trace = traceRequirements(parseRegistry('requirements:\n  - { id: LAG-1, title: t, source: s, owner: o }\n'), [
    { name: 'b', uri: 'b.feature', line: 3, tags: ['@LAG-1', '@slow'] },
    { name: 'a', uri: 'a.feature', line: 9, tags: ['@LAG-1', '@LAG-1'] },
  ]);
  assert.deepEqual(trace.rows[0].scenarios.map((s) => s.name), ['a', 'b']);
  assert.equal(trace.errors, 0);
});

test('only a whole requirement-like tag is a requirement tag: one with more around it is neither traced nor unknown', () => {
  const registry = parseRegistry('requirements:\n  - { id: LAG-1, title: Lag, source: s, owner: o }\n');
  const trace = traceRequirements(registry, [{ name: 'near misses', uri: 'a.feature', line: 3, tags: ['@LAG-1-draft', '@xLAG-1', '@LAG-12x', '@draft@LAG-3', '@LAG-2'] }]);
  assert.deepEqual(
    trace.findings.map((f) => [f.kind, f.requirement]),
    [
      ['unknown-tag', 'LAG-2'],
      ['untraced-scenario', null],
      ['uncovered-requirement', 'LAG-1'],
    ],
  );
  for (const id of ['LAG-1-draft', 'xLAG-1', 'LAG-1 ']) assert.throws(() => parseRegistry(`requirements:\n  - { id: "${id}", title: t, source: s, owner: o }\n`), /id: an id looks like AISIM-1893/, id);
});

test('findings come in file and line order, say what is wrong in words, and count errors and warnings apart', () => {
  const registry = parseRegistry('requirements:\n  - { id: LAG-1, title: Lag, source: s, owner: o }\n  - { id: MIR-2, title: Mirror, source: s, owner: o, status: planned }\n  - { id: DET-1, title: Determinism, source: s, owner: o }\n');
  const trace = traceRequirements(registry, [
    { name: 'later', uri: 'a.feature', line: 30, tags: ['@LAG-1', '@LAG-9'] },
    { name: 'earlier', uri: 'a.feature', line: 4, tags: ['@LAG-1', '@LAG-8'] },
  ]);
  assert.deepEqual(
    trace.findings.map((f) => f.message),
    [
      'a.feature:4 "earlier": tag @LAG-8 names no requirement in the registry',
      'a.feature:30 "later": tag @LAG-9 names no requirement in the registry',
      'MIR-2 "Mirror" is planned and has no scenario yet (a sign-off stays NOT QUALIFIED until it has)',
      'DET-1 "Determinism" has no scenario',
    ],
  );
  assert.deepEqual([trace.errors, trace.warnings], [3, 1]);
  assert.deepEqual(trace.rows[0].scenarios.map((s) => s.name), ['earlier', 'later']);
});

test('a registry that is not valid YAML or not a registry is refused with the file, the place and the problem', () => {
  assert.throws(() => parseRegistry('requirements: [\n', 'reg.yaml'), (error: Error) => error.message.startsWith('reg.yaml: not valid YAML: Flow sequence in block collection'));
  assert.throws(() => parseRegistry('requirements:\n  - { id: LAG-1, title: t, source: s, owner: o }\n  - { id: LAG-2, title: "", source: s, owner: o }\n', 'reg.yaml'), (error: Error) => /^reg\.yaml: invalid requirement registry:\n {2}requirements\.1\.title: [^\n]+$/.test(error.message));
  assert.throws(() => parseRegistry('other: 1\n', 'reg.yaml'), (error: Error) => /^reg\.yaml: invalid requirement registry:\n {2}requirements: [^\n]+\n {2}\(top\): [^\n]*"other"$/.test(error.message));
});
