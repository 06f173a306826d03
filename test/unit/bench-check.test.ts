// Unit tests of `npm run bench`'s targets (bench/harness.ts), on figures made up here, never timed:
// a figure meets its target in its direction (at least, at most; the target itself meets it; an
// unmeasured value never does), prints its target and met / MISSED, and `--check` exits 1 exactly
// when a figure missed, naming each miss; without --check the bench exits 0 whatever it measured;
// `--write`'s results file names the machine, Node, the date and the command, then every figure;
// qualify counts as measured when it reached a verdict (a narrowed one too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DigestFigure, TargetFigure } from '../../bench/harness';
import { spawnSync } from 'node:child_process';
import { BenchUsageError, checkOutcome, describeTarget, parseBenchArgs, rateTarget, selectBenchmarks, targetMet } from '../../bench/harness';
import { resultsMarkdown } from '../../bench/results';
import { ranWholeQualification } from '../../bench/qualify';
import { ROOT } from '../support/paths';

const rate = (value: number): TargetFigure => ({ benchmark: 'trace', label: 'simulated requests per wall second', value, unit: 'requests/s', target: 7_700, better: 'higher' });
const memory = (value: number): TargetFigure => ({ benchmark: 'trace', label: 'peak RSS', value, unit: 'MB', target: 300, better: 'lower' });

test('a figure meets its target in its own direction, the target itself included; an unmeasured one never does', () => {
  assert.equal(targetMet(rate(7_700)), true);
  assert.equal(targetMet(rate(7_699.9)), false);
  assert.equal(targetMet(rate(12_000)), true);
  assert.equal(targetMet(memory(300)), true);
  assert.equal(targetMet(memory(300.1)), false);
  assert.equal(targetMet(memory(120)), true);
  assert.equal(targetMet(memory(Number.NaN)), false);
  assert.equal(targetMet(rate(Number.NaN)), false);
  assert.equal(targetMet(rate(Number.POSITIVE_INFINITY)), false);
});

test('each figure prints its value, its target with its direction, and met or MISSED', () => {
  assert.equal(describeTarget(rate(1_025.4)), 'trace: simulated requests per wall second 1,025 requests/s (target ≥ 7,700 requests/s): MISSED');
  assert.equal(describeTarget(memory(250)), 'trace: peak RSS 250 MB (target ≤ 300 MB): met');
  assert.equal(describeTarget({ benchmark: 'qualify', label: 'wall of npm run qualify', value: 9.94, unit: 's', target: 10, better: 'lower', decimals: 1 }), 'qualify: wall of npm run qualify 9.9 s (target ≤ 10.0 s): met');
  assert.equal(describeTarget(memory(Number.NaN)), 'trace: peak RSS not measured (target ≤ 300 MB): MISSED');
});

test('a harness rate figure becomes an at-least target with its unit per second', () => {
  const figure = rateTarget({ name: 'kernel', unit: 'events', targetPerSecond: 2_000_000, ratesPerSecond: [1, 2, 3], medianPerSecond: 1_900_000, met: false });
  assert.deepEqual(figure, { benchmark: 'kernel', label: 'events per second (median)', value: 1_900_000, unit: 'events/s', target: 2_000_000, better: 'higher' });
  assert.equal(targetMet(figure), false);
});

test('--check exits 1 when any figure missed its target, naming each miss, and 0 when all met', () => {
  const missed = checkOutcome([rate(8_000), memory(450), rate(100)], true);
  assert.equal(missed.status, 1);
  assert.deepEqual(missed.lines, [
    'bench --check: 2 of 3 targets missed:',
    '  trace: peak RSS 450 MB (target ≤ 300 MB): MISSED',
    '  trace: simulated requests per wall second 100 requests/s (target ≥ 7,700 requests/s): MISSED',
  ]);
  const met = checkOutcome([rate(8_000), memory(299)], true);
  assert.deepEqual(met, { status: 0, lines: ['bench --check: every target met (2 figures)'] });
  assert.equal(checkOutcome([memory(Number.NaN)], true).status, 1, 'a figure that could not be measured is a miss');
});

const RECORDED = 'sha256:618e36b8bd0202f181f930ba25644b4b4bb8f520c3dd7daa506fb4d540ae316f';
const digest = (now: string, recorded: string | null): DigestFigure => ({ kind: 'digest', benchmark: 'trace', run: 'whole conversation trace, 16 workers', digest: now, recorded });

test('a long run\'s digest is met only as recorded: a moved or unrecorded digest is a miss that says so', () => {
  const moved = 'sha256:0f00160b6d7881920f31bfb0b96b74a904031ff7bcfc30c27e425e458fae780a';
  assert.equal(targetMet(digest(RECORDED, RECORDED)), true);
  assert.equal(targetMet(digest(moved, RECORDED)), false);
  assert.equal(targetMet(digest(RECORDED, null)), false);
  assert.equal(describeTarget(digest(RECORDED, RECORDED)), 'trace: report digest of whole conversation trace, 16 workers sha256:618e36b8bd02…: as recorded');
  assert.equal(
    describeTarget(digest(moved, RECORDED)),
    'trace: report digest of whole conversation trace, 16 workers sha256:0f00160b6d78…: MOVED from the recorded sha256:618e36b8bd02… (different results: the figures measure other work; npm run golden -- --long)',
  );
  assert.equal(describeTarget(digest(RECORDED, null)), 'trace: report digest of whole conversation trace, 16 workers sha256:618e36b8bd02…: NOT RECORDED (npm run golden -- --long --write records it)');
  const outcome = checkOutcome([rate(8_000), digest(moved, RECORDED)], true);
  assert.equal(outcome.status, 1, 'a moved digest fails --check even when every timed target is met');
  assert.match(outcome.lines[1], /MOVED from the recorded/);
});

test('without --check the bench exits 0 whatever was missed', () => {
  assert.deepEqual(checkOutcome([rate(100), memory(900)], false), { status: 0, lines: [] });
});

test('the command line: benchmark names and --check in any order; another option is refused', () => {
  assert.deepEqual(parseBenchArgs([]), { names: [], check: false, write: false });
  assert.deepEqual(parseBenchArgs(['--check']), { names: [], check: true, write: false });
  assert.deepEqual(parseBenchArgs(['trace', '--check', 'qualify']), { names: ['trace', 'qualify'], check: true, write: false });
  assert.deepEqual(parseBenchArgs(['--write', 'kernel']), { names: ['kernel'], check: false, write: true });
  assert.throws(() => parseBenchArgs(['trace', '--chek']), /unknown option --chek; usage: npm run bench -- \[name …\] \[--check\] \[--write\]/);
});

test('a benchmark name must be a known one, never a property every object has (toString, constructor, …)', () => {
  const known = new Map<string, unknown>([['kernel', 1], ['trace', 2]]);
  assert.deepEqual(selectBenchmarks([], ['kernel'], known), ['kernel']);
  assert.deepEqual(selectBenchmarks(['trace', 'kernel'], ['kernel'], known), ['trace', 'kernel']);
  for (const name of ['nosuch', 'toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__']) {
    assert.throws(() => selectBenchmarks([name], ['kernel'], known), (error: Error) => error instanceof BenchUsageError && error.message === `unknown benchmark ${name}; known: kernel, trace`);
  }
  assert.throws(() => parseBenchArgs(['--bogus']), BenchUsageError);
});

test('npm run bench with an unknown benchmark or option prints one line and exits 2, running nothing', () => {
  // As real processes, an unknown name and an unknown option (a prototype name, e.g. constructor, is an unknown name to selectBenchmarks above, the one path main takes for both).
  for (const arg of ['nosuch', '--bogus']) {
    const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', 'bench/index.ts', arg], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 2, `${arg}: ${result.stdout}${result.stderr}`);
    assert.equal(result.stdout, '', arg);
    assert.match(result.stderr, arg === '--bogus' ? /^bench: unknown option --bogus; usage: / : new RegExp(`^bench: unknown benchmark ${arg}; known: kernel, router, e2e, trace, qualify, loops, scale, sweep\n$`));
    assert.equal(result.stderr.trim().split('\n').length, 1, arg);
  }
});

test('the results file --write writes: machine, Node, date and command in its header, every figure with its target and verdict, digests apart', () => {
  const context = { machine: 'Some CPU, 2 cores, 23 GB, linux x64', node: 'v20.20.2', date: '2030-01-02T03:04Z', load: [1.5, 2.25] as [number, number], names: ['trace'] };
  const moved: DigestFigure = { kind: 'digest', benchmark: 'trace', run: 'whole trace, 16 workers', digest: `sha256:${'b'.repeat(64)}`, recorded: `sha256:${'a'.repeat(64)}` };
  const text = resultsMarkdown(context, [rate(3_376.4), memory(225), moved]);
  assert.match(text, /^# Benchmark results\n/);
  for (const line of ['- machine: Some CPU, 2 cores, 23 GB, linux x64', '- Node: v20.20.2', '- date: 2030-01-02T03:04Z', '- command: `npm run bench -- trace --write`', '- load average (1 min): 1.50 at the start, 2.25 at the end', '- targets: 1 of 3 met']) {
    assert.ok(text.includes(`${line}\n`), `header line ${line}:\n${text}`);
  }
  assert.ok(text.includes('| trace | simulated requests per wall second | 3,376 requests/s | ≥ 7,700 requests/s | MISSED |\n'), text);
  assert.ok(text.includes('| trace | peak RSS | 225 MB | ≤ 300 MB | met |\n'), text);
  assert.ok(text.includes('| trace | whole trace, 16 workers | `sha256:bbbbbbbbbbbb…` | MOVED |\n'), text);
  assert.equal(resultsMarkdown({ ...context, names: [] }, [rate(8_000)]).includes('| run | digest |'), false, 'no digest table without digests');
  assert.ok(resultsMarkdown({ ...context, names: [] }, [rate(8_000)]).includes('- command: `npm run bench -- --write`\n'));
});

test('qualify is measured when it ran to a verdict: qualified, not qualified, or narrowed (a working tree that differs from its commit); never a usage error or a crash', () => {
  for (const status of [0, 1, 3]) assert.equal(ranWholeQualification(status), true, `exit ${status}`);
  for (const status of [2, 4, 134, null]) assert.equal(ranWholeQualification(status), false, `exit ${status}`);
});
