// Coverage figures of src/ for the sign-off, summarised from c8's json-summary report (line,
// branch and function percentages, in total and per directory of src/), with the wording of
// what was measured kept beside the numbers.
import path from 'node:path';
import { compareText } from '../order';

export interface CoverageFigure {
  covered: number;
  total: number;
  /** Percentage with one decimal, rounded down (never overstated). */
  pct: number;
}

export interface CoverageGroup {
  path: string;
  files: number;
  lines: CoverageFigure;
  branches: CoverageFigure;
  functions: CoverageFigure;
}

export interface CoverageSummary {
  /** What ran while measuring, in words. */
  scope: string;
  lines: CoverageFigure;
  branches: CoverageFigure;
  functions: CoverageFigure;
  groups: CoverageGroup[];
}

type Counts = { total: number; covered: number };
type FileSummary = { lines: Counts; branches: Counts; functions: Counts };

export function figure(covered: number, total: number): CoverageFigure {
  return { covered, total, pct: total === 0 ? 100 : Math.floor((covered / total) * 1000) / 10 };
}

function add(into: { lines: Counts; branches: Counts; functions: Counts }, file: FileSummary): void {
  for (const key of ['lines', 'branches', 'functions'] as const) {
    into[key].total += file[key].total;
    into[key].covered += file[key].covered;
  }
}

const zero = () => ({ lines: { total: 0, covered: 0 }, branches: { total: 0, covered: 0 }, functions: { total: 0, covered: 0 } });

/** Summarises c8's coverage-summary.json for the files under `<root>/src`, grouped by directory. */
export function summariseCoverage(summary: Record<string, FileSummary>, root: string, scope: string): CoverageSummary {
  const total = zero();
  const groups = new Map<string, ReturnType<typeof zero> & { files: number }>();
  for (const [file, counts] of Object.entries(summary)) {
    if (file === 'total') continue;
    const relative = path.relative(root, file).split(path.sep).join('/');
    if (!relative.startsWith('src/')) continue;
    add(total, counts);
    const dir = path.posix.dirname(relative);
    const group = groups.get(dir) ?? { ...zero(), files: 0 };
    add(group, counts);
    group.files++;
    groups.set(dir, group);
  }
  return {
    scope,
    lines: figure(total.lines.covered, total.lines.total),
    branches: figure(total.branches.covered, total.branches.total),
    functions: figure(total.functions.covered, total.functions.total),
    groups: [...groups.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .map(([dir, g]) => ({
        path: `${dir}/`,
        files: g.files,
        lines: figure(g.lines.covered, g.lines.total),
        branches: figure(g.branches.covered, g.branches.total),
        functions: figure(g.functions.covered, g.functions.total),
      })),
  };
}

/** One test or scenario that did not pass in the compiled coverage run. */
export interface CoverageRunFailure {
  kind: 'unit test' | 'scenario';
  name: string;
  /** File (and line) it is defined at, relative to the repository. */
  where: string;
  /** Why, in one line (the assertion's message, or the scenario's status). */
  why: string;
}

/**
 * The compiled run that measured coverage: the feature files run once more, from the compiled
 * JavaScript (sign-offs of earlier versions also ran the unit tests there, hence the unit fields). Any failure here fails the "coverage run" gate.
 */
export interface CoverageRun {
  unitFiles: number;
  unitTests: number;
  /** Unit tests that passed (TAP's `# pass`; absent in sign-offs made before it was counted). */
  unitPassed?: number;
  scenarios: number;
  failures: CoverageRunFailure[];
  /**
   * Unit tests the compiled run skipped or left to do (e.g. one that needs the published traces),
   * with the reason given: not failures, but not passed again either (absent in sign-offs made
   * before it was counted).
   */
  skipped?: SkippedTest[];
  /** What kept the run from completing (tsc errors, no JavaScript, c8 could not report). */
  problems: string[];
}

export interface SkippedTest {
  name: string;
  /** The reason the test gave, or '' when it gave none. */
  why: string;
}

/**
 * The failed tests of a `node --test --test-reporter=tap` run, named with their file and line
 * (from the diagnostic's `location`) and the first line of their error, in output order. A test
 * that failed only because subtests failed is left out: its subtests are listed; so is one left to
 * do (`# TODO`), which does not fail the run.
 */
export function failedTapTests(tap: string, root: string): CoverageRunFailure[] {
  const lines = tap.split('\n');
  const out: CoverageRunFailure[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^\s*not ok \d+ - (.*)$/.exec(lines[i]);
    // A test left to do (# TODO) does not fail the run, failing or not: it is listed as skipped (skippedTapTests).
    if (!match || / # TODO(?: .*)?$/.test(match[1])) continue;
    let where = '';
    let why = '';
    let onlySubtests = false;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j];
      if (/^\s+\.\.\.$/.test(line) || /^\s*(?:ok|not ok) \d+ /.test(line)) break;
      const location = /^\s+location: '(.*)'$/.exec(line);
      if (location && !where) where = relativeLocation(location[1], root);
      if (/^\s+failureType: 'subtestsFailed'$/.test(line)) onlySubtests = true;
      const error = /^\s+error: (.*)$/.exec(line);
      if (error && !why) why = /^[|>]-?$/.test(error[1].trim()) ? (lines[j + 1] ?? '').trim() : unquote(error[1]);
    }
    if (onlySubtests) continue;
    out.push({ kind: 'unit test', name: match[1].replace(/\\#/g, '#'), where, why });
  }
  return out;
}

/** The tests of a `node --test --test-reporter=tap` run marked `# SKIP` or `# TODO`, with their reasons, in output order. */
export function skippedTapTests(tap: string): SkippedTest[] {
  const out: SkippedTest[] = [];
  for (const line of tap.split('\n')) {
    const match = /^\s*(?:not )?ok \d+ - (.*?) # (?:SKIP|TODO)(?: (.*))?$/.exec(line);
    if (match) out.push({ name: match[1].replace(/\\#/g, '#'), why: (match[2] ?? '').trim() });
  }
  return out;
}

function unquote(text: string): string {
  return text.trim().replace(/^'(.*)'$/, '$1').replace(/''/g, "'");
}

function relativeLocation(location: string, root: string): string {
  const relative = location.startsWith(root) ? location.slice(root.length).replace(/^[/\\]+/, '') : location;
  return relative.split(path.sep).join('/');
}
