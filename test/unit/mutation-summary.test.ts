// Unit tests of the mutation-report summary printed by `npm run mutation`
// (scripts/mutation/summary.ts): Stryker's score formula, per-directory tallies, which survivors
// are listed, and that an unfinished report is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MutantStatus, MutationReport, ReportMutant, summarise, survivors, tallies, mutationScore, coveredScore } from '../../scripts/mutation/summary';

function mutant(id: string, status: MutantStatus, line: number, startColumn: number, endColumn: number, mutatorName: string, replacement: string): ReportMutant {
  return { id, status, mutatorName, replacement, location: { start: { line, column: startColumn }, end: { line, column: endColumn } } };
}

const routerSource = ['export function pick(a: number, b: number) {', '  if (a < b) return a;', '  return b;', '}'].join('\n');
const eventsSource = ['export function check(lag: number) {', "  if (lag < 0) throw new RangeError('lag must not be negative');", '}'].join('\n');

const report: MutationReport = {
  files: {
    'src/router/pick.ts': {
      source: routerSource,
      mutants: [
        mutant('1', 'Killed', 2, 7, 12, 'EqualityOperator', 'a <= b'),
        mutant('2', 'Survived', 2, 7, 12, 'ConditionalExpression', 'true'),
        mutant('3', 'Timeout', 3, 3, 12, 'BlockStatement', '{}'),
        mutant('4', 'RuntimeError', 3, 10, 11, 'ArrayDeclaration', '[]'),
      ],
    },
    'src/events/check.ts': {
      source: eventsSource,
      mutants: [
        mutant('5', 'Killed', 2, 7, 14, 'EqualityOperator', 'lag <= 0'),
        mutant('6', 'Survived', 2, 37, 63, 'StringLiteral', '""'),
        mutant('7', 'NoCoverage', 2, 7, 14, 'ConditionalExpression', 'false'),
      ],
    },
  },
};

test('the score is detected (killed + timed out) over detected + survived + not covered; errors do not count', () => {
  const { total, byDirectory } = tallies(report);
  assert.deepEqual(total, { killed: 2, timeout: 1, survived: 2, noCoverage: 1, errors: 1, ignored: 0 });
  assert.equal(mutationScore(total), 50);
  assert.equal(coveredScore(total), 60);
  assert.deepEqual([...byDirectory.keys()], ['src/events', 'src/router']);
  assert.equal(mutationScore(byDirectory.get('src/router')!), (100 * 2) / 3);
  assert.equal(mutationScore(byDirectory.get('src/events')!), (100 * 1) / 3);
});

test('survivors carry their place, the code they change and whether only an error message changes', () => {
  const found = survivors(report);
  assert.deepEqual(
    found.map((s) => [s.file, s.line, s.column, s.original, s.replacement, s.status, s.messageText]),
    [
      ['src/events/check.ts', 2, 7, 'lag < 0', 'false', 'NoCoverage', false],
      ['src/events/check.ts', 2, 37, "'lag must not be negative'", '""', 'Survived', true],
      ['src/router/pick.ts', 2, 7, 'a < b', 'true', 'Survived', false],
    ],
  );
});

test('the summary lists behaviour-changing survivors and counts the message-only ones unless --all', () => {
  const short = summarise(report, { all: false });
  assert.match(short, /^mutation score \(all mutated files\): score 50\.00 % \(covered 60\.00 %\)/);
  assert.match(short, /surviving mutants that change behaviour \(2\):/);
  assert.match(short, /src\/router\/pick\.ts:2:7 {2}ConditionalExpression: a < b → true/);
  assert.match(short, /src\/events\/check\.ts:2:7 {2}ConditionalExpression: lag < 0 → false \(no test runs it\)/);
  assert.doesNotMatch(short, /check\.ts:2:37/);
  assert.match(short, /\+ 1 that only change an error message's text/);
  const full = summarise(report, { all: true });
  assert.match(full, /surviving mutants \(3\):/);
  assert.match(full, /check\.ts:2:37 {2}StringLiteral: 'lag must not be negative' → ""/);
});

test('a report with a mutant still pending (an interrupted run) is refused, not scored', () => {
  const unfinished: MutationReport = { files: { 'src/a.ts': { source: 'x', mutants: [mutant('1', 'Pending', 1, 1, 2, 'BooleanLiteral', 'false')] } } };
  assert.throws(() => tallies(unfinished), /mutant status Pending is not a final result/);
});
