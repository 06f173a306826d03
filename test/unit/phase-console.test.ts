// The console of `npm run qualify` (src/signoff/phaseConsole.ts, bin/progress.js) with a fake clock
// and a fake terminal width: phases that end out of order are printed in number order, one line
// each with its result and time; no line is wider than the console; the live status line says what
// runs and for how long; a failure named by both runs is printed once; on a terminal the status
// line is drawn by cli-progress beside the printed lines and cut to the terminal's width, and
// piped output gets no display at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { cutLine, failuresToPrint, fitText, PhaseConsole, PIPED_COLUMNS, reportVerdict, wrapLine } from '../../src/signoff/phaseConsole';
import { parseRun } from '../../src/signoff/messages';
import type { SignoffModel } from '../../src/signoff/model';
import type { Measured } from '../../src/signoff/coverageRun';
import { fakeMessages } from '../support/messages';
import { ROOT } from '../support/paths';

/** A console of `columns` characters (undefined: piped) on a clock the test moves. */
function fakeConsole(columns?: number) {
  let now = 1_000;
  const written: string[] = [];
  return {
    ctx: { write: (text: string) => void written.push(text), now: () => now, columns },
    advance: (ms: number) => void (now += ms),
    lines: () => written.join('').split('\n').filter((line) => line !== ''),
  };
}

/** A promise the test settles when it likes. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('phases that end out of order are printed in number order, each once with its result and time', async () => {
  const con = fakeConsole(72);
  const phases = new PhaseConsole(con.ctx, ['run 1 of 2', 'generated workloads', 'planted faults']);
  const one = deferred<number>();
  const two = deferred<number>();
  const first = phases.run(0, () => one.promise, (n) => `${n} of 3 scenarios passed`);
  const second = phases.run(1, () => two.promise, (n) => `${n} cases kept every invariant`);
  con.advance(2_000);
  two.resolve(20);
  await second;
  assert.deepEqual(con.lines(), [], 'phase 2 waits for phase 1');
  con.advance(1_500);
  one.resolve(3);
  await first;
  assert.deepEqual(con.lines(), ['[1/3] run 1 of 2: 3 of 3 scenarios passed (3.5 s)', '[2/3] generated workloads: 20 cases kept every invariant (2.0 s)']);
  phases.skip(2, 'run 1 wrote no message stream');
  assert.equal(con.lines()[2], '[3/3] planted faults: not run: run 1 wrote no message stream');
  phases.close();
  assert.equal(con.lines().length, 3, 'close prints nothing twice');
});

test('close prints the phases that never ran, in order, as not run', async () => {
  const con = fakeConsole();
  const phases = new PhaseConsole(con.ctx, ['a', 'b', 'c']);
  await phases.run(2, () => 1);
  assert.deepEqual(con.lines(), []);
  phases.close();
  assert.deepEqual(con.lines(), ['[1/3] a: not run', '[2/3] b: not run', '[3/3] c: done (0.0 s)']);
});

test('the status line names each running phase with its time so far, and the phases done of all', async () => {
  const con = fakeConsole(80);
  const phases = new PhaseConsole(con.ctx, ['run 1 of 2: the suite through tsx', 'type check (tsc)', 'sign-off']);
  assert.deepEqual(phases.status(), { done: 0, total: 3, text: 'starting · 0 s in all' });
  const slow = deferred<void>();
  const running = phases.run(0, () => slow.promise);
  con.advance(4_000);
  const typed = phases.run(1, () => undefined);
  con.advance(7_900);
  await typed;
  assert.deepEqual(phases.status(), { done: 1, total: 3, text: 'running [1] run 1 of 2 11 s · 11 s in all' });
  slow.resolve();
  await running;
  assert.equal(phases.status().done, 2);
});

test('no line is wider than the console: a long result wraps at a space, indented; a long word is cut', async () => {
  for (const columns of [40, 72, undefined]) {
    const con = fakeConsole(columns);
    const width = columns ?? PIPED_COLUMNS;
    const phases = new PhaseConsole(con.ctx, ['planted faults']);
    const long = `163 passed scenarios run again under 17 planted simulator faults in turn: ${'every one failed '.repeat(12)}/a/${'very-long-folder-name-'.repeat(8)}`;
    await phases.run(0, () => long, (text) => text);
    phases.note(`removed what earlier runs left unfinished: ${'x'.repeat(300)}`);
    for (const line of con.lines()) assert.ok(line.length <= width, `${line.length} > ${width}: ${line}`);
    assert.ok(con.lines().slice(1).some((line) => line.startsWith('      ')), 'continuations are indented');
    assert.equal(con.lines().join(' ').replace(/\s+/g, ' ').includes('every one failed every one failed'), true, 'nothing is lost at a break');
  }
  assert.deepEqual(wrapLine('aaaa bbbb cccc', 9, '  '), ['aaaa bbbb', '  cccc']);
  assert.equal(cutLine('abcdef', 4), 'abc…');
  assert.equal(cutLine('abc', 4), 'abc');
});

test('what a tool prints is never passed through raw: escapes and carriage returns are removed, a 1,592-character line of dots wraps', () => {
  const fitted = fitText(`\x1b[32m${'.'.repeat(1592)}\x1b[0m\rdone\ttoo`, 100);
  assert.doesNotMatch(fitted, /[\x00-\x09\x0b-\x1f\x7f]/);
  for (const line of fitted.split('\n')) assert.ok(line.length <= 100);
});

test('a scenario that failed in run 1 and again in the compiled run is printed once; a failure of the compiled run alone is printed too; an undefined step with its nearest phrases', () => {
  const step = (status: 'PASSED' | 'FAILED' | 'UNDEFINED', message?: string) => ({ keyword: 'Then', text: 'it is placed on worker 1', status, message });
  const run = parseRun(
    fakeMessages([
      { uri: 'features/a.feature', line: 3, name: 'fails twice', tags: [], steps: [step('FAILED', 'expected worker 1\n  at stack')] },
      { uri: 'features/a.feature', line: 9, name: 'passes', tags: [], steps: [step('PASSED')] },
      { uri: 'features/a.feature', line: 15, name: 'misspelt', tags: [], steps: [step('UNDEFINED')] },
    ]),
  );
  const notPassed = run.scenarios
    .filter((scenario) => scenario.status !== 'PASSED')
    .map((scenario) => ({ scenario, suggestions: scenario.name === 'misspelt' ? [{ step: scenario.steps.find((s) => s.status === 'UNDEFINED')!, phrases: ['it is placed on worker {int}'] }] : [] }));
  const measured: Measured = {
    summary: null,
    note: '',
    run: {
      unitFiles: 0,
      unitTests: 0,
      scenarios: 2,
      problems: [],
      failures: [
        { kind: 'scenario', name: 'fails twice', where: 'features/a.feature:3', why: 'failed' },
        { kind: 'scenario', name: 'passes', where: 'features/a.feature:9', why: 'failed: only compiled' },
      ],
    },
  };
  const failures = failuresToPrint({ notPassed } as unknown as Pick<SignoffModel, 'notPassed'>, measured);
  assert.deepEqual(
    failures.map((f) => `${f.kind} ${f.where}: ${f.why}`),
    [
      'scenario features/a.feature:3: failed: expected worker 1',
      'scenario features/a.feature:15: undefined: Then it is placed on worker 1; did you mean: "it is placed on worker {int}"',
      'scenario (compiled run only) features/a.feature:9: failed: only compiled',
    ],
  );
  const con = fakeConsole(50);
  const model = { verdict: 'NOT QUALIFIED', gates: [{ title: 'Scenarios', passed: false, summary: '1 of 2 scenarios passed (1 failed)' }], narrowed: [] } as unknown as SignoffModel;
  reportVerdict({ ...con.ctx, root: ROOT, env: {}, date: () => '', subject: () => ({}) as never }, model, failures);
  const text = con.lines().join('\n');
  assert.equal(text.split('fails twice').length - 1, 1, `one failure, once:\n${text}`);
  assert.match(text, /^FAIL {2}Scenarios: 1 of 2 scenarios passed/m);
  for (const line of con.lines()) assert.ok(line.length <= 50, line);
});

interface Display {
  start(status: () => { done: number; total: number; text: string }): { stop(): void };
  write(text: string): void;
  stop(): void;
}
const { phaseProgress } = require(path.join(ROOT, 'bin', 'progress.js')) as { phaseProgress(stream: NodeJS.WritableStream, refreshMs?: number): Display | null };

test('on a terminal the status line is drawn beside the printed lines and cut to its width; piped, there is no display', async () => {
  assert.equal(phaseProgress(Object.assign(new PassThrough(), { isTTY: false })), null);
  const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 60, cursorTo: () => true, moveCursor: () => true, clearLine: () => true, clearScreenDown: () => true });
  let drawn = '';
  tty.on('data', (chunk) => (drawn += chunk));
  const display = phaseProgress(tty, 20)!;
  let done = 0;
  const live = display.start(() => ({ done, total: 9, text: `running [1] run 1 of 2 ${'x'.repeat(100)}` }));
  display.write('[1/9] compile to build/ (esbuild): done (0.4 s)\n');
  done = 1;
  await new Promise((resolve) => setTimeout(resolve, 120));
  live.stop();
  display.stop();
  assert.match(drawn, /\[1\/9\] compile to build\/ \(esbuild\): done \(0\.4 s\)\n/, 'a line printed meanwhile is written');
  assert.match(drawn, /qualify \|.*\| 1\/9 phases · running \[1\] run 1 of 2/, 'the status line shows the phases done');
  for (const line of drawn.split(/[\n\r]/).map((l) => l.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''))) assert.ok(line.length <= 60, `${line.length}: ${line}`);
});
