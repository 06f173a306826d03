// The results file `npm run bench -- --write` writes (bench/RESULTS.md): a header naming the
// machine, Node, the date and the command, then every figure of the run with its target and
// met / MISSED, and the long runs' digests beside their record. The figures are the bench's own
// output, never typed in; the README links the file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchFigure } from './harness';
import { describeValue, splitFigures, targetMet } from './harness';

/** Where `--write` puts the results, from the repository root. */
export const RESULTS_FILE = path.join('bench', 'RESULTS.md');

/** What the results were measured on and when (read once, at the end of the run). */
export interface RunContext {
  /** "AMD EPYC 7B13, 2 cores, 23 GB, linux x64". */
  machine: string;
  /** "v20.20.2". */
  node: string;
  /** The wall-clock instant the run ended, ISO 8601 in UTC, to the minute. */
  date: string;
  /** The one-minute load average at the start and at the end of the run. */
  load: [number, number];
  /** The benchmarks run, as named on the command line (the default set when none was). */
  names: string[];
}

/** The machine as the results file's header names it. */
export function describeMachine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() || 'unknown CPU';
  return `${model}, ${cpus.length} core${cpus.length === 1 ? '' : 's'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.platform()} ${os.arch()}`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The results file's whole text. */
export function resultsMarkdown(context: RunContext, figures: readonly BenchFigure[]): string {
  const { targets, digests } = splitFigures(figures);
  const missed = figures.filter((figure) => !targetMet(figure)).length;
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench -- --write`; run it again to replace this file. The targets are goals for an',
    'idle two-core machine, not gates: on a shared machine the figures vary by ±40 % from run to run, so',
    'compare before and after on one machine at a similar load ([docs/performance.md](../docs/performance.md)).',
    '',
    `- machine: ${context.machine}`,
    `- Node: ${context.node}`,
    `- date: ${context.date}`,
    `- command: \`npm run bench -- ${[...context.names, '--write'].join(' ')}\``,
    `- load average (1 min): ${context.load[0].toFixed(2)} at the start, ${context.load[1].toFixed(2)} at the end`,
    `- targets: ${figures.length - missed} of ${figures.length} met`,
    '',
    '| benchmark | figure | measured | target | |',
    '|---|---|---|---|---|',
    ...targets.map((figure) => `| ${figure.benchmark} | ${cell(figure.label)} | ${describeValue(figure)} | ${figure.better === 'higher' ? '≥' : '≤'} ${describeValue(figure, figure.target)} | ${targetMet(figure) ? 'met' : 'MISSED'} |`),
  ];
  if (digests.length > 0) {
    lines.push(
      '',
      'Report digests of the long runs beside their record (`test/fixtures/golden-digests.json`): a moved digest means the',
      'build gives other results, so its figures measure other work.',
      '',
      '| benchmark | run | digest | |',
      '|---|---|---|---|',
      ...digests.map((figure) => `| ${figure.benchmark} | ${cell(figure.run)} | \`${figure.digest.slice(0, 19)}…\` | ${figure.recorded === figure.digest ? 'as recorded' : figure.recorded === null ? 'NOT RECORDED' : 'MOVED'} |`),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Writes the results file whole (a temporary file beside it, renamed into place). */
export function writeResults(root: string, text: string): string {
  const file = path.join(root, RESULTS_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
  return file;
}
