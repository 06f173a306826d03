// Unit tests of the coverage summary: files of src/ only, grouped per directory, percentages
// rounded down so a figure is never overstated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failedTapTests, figure, skippedTapTests, summariseCoverage } from '../../src/signoff/coverage';

const counts = (covered: number, total: number) => ({ lines: { covered, total }, branches: { covered: 1, total: 2 }, functions: { covered: 1, total: 1 } });

test('coverage of src/ grouped by directory', () => {
  const summary = summariseCoverage(
    {
      total: counts(0, 0),
      '/repo/src/time.ts': counts(9, 10),
      '/repo/src/router/router.ts': counts(2, 3),
      '/repo/src/router/mirror.ts': counts(1, 1),
      '/repo/steps/world.ts': counts(0, 50),
    },
    '/repo',
    'unit tests and features',
  );
  assert.deepEqual(summary.lines, { covered: 12, total: 14, pct: 85.7 });
  assert.deepEqual(summary.branches, { covered: 3, total: 6, pct: 50 });
  assert.deepEqual(summary.groups.map((g) => [g.path, g.files, g.lines.pct]), [
    ['src/', 1, 90],
    ['src/router/', 2, 75],
  ]);
  assert.equal(summary.scope, 'unit tests and features');
});

test('skipped tests and tests left to do are named with their reasons, in order; a failing one left to do is not a failure', () => {
  const tap = [
    'TAP version 13',
    'ok 1 - a \\# hash # SKIP no ../shared here',
    'ok 2 - plain skip # SKIP',
    '    ok 1 - in body # SKIP later',
    'not ok 4 - todo one # TODO not yet',
    '  ---',
    "  location: '/repo/build/test/unit/a.test.js:4:1'",
    "  error: 'x'",
    '  ...',
    'ok 5 - passes',
    'ok 6 - named \\# SKIP but runs',
  ].join('\n');
  assert.deepEqual(skippedTapTests(tap), [
    { name: 'a # hash', why: 'no ../shared here' },
    { name: 'plain skip', why: '' },
    { name: 'in body', why: 'later' },
    { name: 'todo one', why: 'not yet' },
  ]);
  assert.deepEqual(failedTapTests(tap, '/repo'), []);
});

test('percentages are rounded down', () => {
  assert.equal(figure(2, 3).pct, 66.6);
  assert.equal(figure(0, 0).pct, 100);
});

test('failed tests of a TAP run are named with their file, line and first error line; a parent failing only through subtests is left out', () => {
  const tap = [
    'TAP version 13',
    '# Subtest: passes',
    'ok 1 - passes',
    '# Subtest: fails \\# hash',
    'not ok 2 - fails \\# hash',
    '  ---',
    "  location: '/repo/build/test/unit/a.test.js:3:1'",
    "  failureType: 'testCodeFailure'",
    '  error: |-',
    '    one is not two',
    '  ...',
    '# Subtest: parent',
    '    not ok 1 - child fails',
    '      ---',
    "      location: '/repo/build/test/unit/a.test.js:4:39'",
    "      error: 'boom'",
    '      ...',
    'not ok 3 - parent',
    '  ---',
    "  location: '/repo/build/test/unit/a.test.js:4:1'",
    "  failureType: 'subtestsFailed'",
    "  error: '1 subtest failed'",
    '  ...',
  ].join('\n');
  assert.deepEqual(failedTapTests(tap, '/repo'), [
    { kind: 'unit test', name: 'fails # hash', where: 'build/test/unit/a.test.js:3:1', why: 'one is not two' },
    { kind: 'unit test', name: 'child fails', where: 'build/test/unit/a.test.js:4:39', why: 'boom' },
  ]);
});

test('functions are summed like lines and branches, and directories are listed in name order whatever order c8 gives', () => {
  const file = (functions: number) => ({ lines: { covered: 1, total: 1 }, branches: { covered: 1, total: 1 }, functions: { covered: functions, total: 2 } });
  const summary = summariseCoverage({ '/repo/src/z/a.ts': file(1), '/repo/src/a/b.ts': file(2), '/repo/src/m.ts': file(0) }, '/repo', 'unit tests');
  assert.deepEqual(summary.functions, { covered: 3, total: 6, pct: 50 });
  assert.deepEqual(summary.groups.map((g) => [g.path, g.functions.pct]), [
    ['src/', 0],
    ['src/a/', 100],
    ['src/z/', 50],
  ]);
});

test('only whole TAP lines count: a passing test named like a failure is not one, test numbers of several digits are read, and what a test says is unquoted and trimmed', () => {
  const tap = [
    'ok 9 - says not ok 1 - when it passes',
    'not ok 12 - the twelfth',
    '  ---',
    "  location: '/repo/build/test/unit/b.test.js:7:3'",
    "  error: 'it''s broken'",
    '  ...',
    'ok 13 - number thirteen # SKIP   needs a GPU  ',
    '# ok 14 - a comment # SKIP not a test',
  ].join('\n');
  assert.deepEqual(failedTapTests(tap, '/repo/'), [{ kind: 'unit test', name: 'the twelfth', where: 'build/test/unit/b.test.js:7:3', why: "it's broken" }]);
  assert.deepEqual(skippedTapTests(tap), [{ name: 'number thirteen', why: 'needs a GPU' }]);
});
