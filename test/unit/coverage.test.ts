// Unit tests of the coverage summary: files of src/ only, grouped per directory, percentages
// rounded down so a figure is never overstated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { figure, summariseCoverage } from '../../src/signoff/coverage';

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

test('percentages are rounded down', () => {
  assert.equal(figure(2, 3).pct, 66.6);
  assert.equal(figure(0, 0).pct, 100);
});
