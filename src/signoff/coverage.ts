// Coverage figures of src/ for the sign-off, summarised from c8's json-summary report (line,
// branch and function percentages, in total and per directory of src/), with the wording of
// what was measured kept beside the numbers.
import path from 'node:path';

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
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([dir, g]) => ({
        path: `${dir}/`,
        files: g.files,
        lines: figure(g.lines.covered, g.lines.total),
        branches: figure(g.branches.covered, g.branches.total),
        functions: figure(g.functions.covered, g.functions.total),
      })),
  };
}
