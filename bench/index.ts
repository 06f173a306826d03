// `npm run bench [-- name …] [--check] [--write]`: runs the named benchmarks (the default set when none is
// named) and prints each figure with its target and whether it met it; with --check, exits 1 when
// any target of the benchmarks run was missed (for people comparing before and after on one
// machine, not a CI gate: timings are noisy); with --write, also writes them to bench/RESULTS.md
// with the machine, Node and the date; an unknown option or benchmark exits 2 with one line.
// Add a benchmark to BENCHMARKS or RUNNERS.
import os from 'node:os';
import path from 'node:path';
import type { BenchFigure, Benchmark } from './harness';
import { BENCH_USAGE_EXIT, BenchUsageError, checkOutcome, describeFigure, describeTarget, measure, parseBenchArgs, rateTarget, selectBenchmarks } from './harness';
import { kernelBenchmark } from './kernel';
import { routerBenchmark } from './router';
import { endToEndBenchmark } from './endToEnd';
import { runScaleBenchmark } from './scale';
import { runSweepBenchmark } from './sweep';
import { runTraceBenchmark } from './trace';
import { runQualifyBenchmark } from './qualify';
import { runLoopsBenchmark } from './loops';
import { describeMachine, resultsMarkdown, writeResults } from './results';

/** Rate benchmarks run by the harness (warm-up, three timed passes): the default set. */
const BENCHMARKS = new Map<string, () => Benchmark>([
  ['kernel', kernelBenchmark],
  ['router', routerBenchmark],
  ['e2e', endToEndBenchmark],
]);

/** Benchmarks that run fresh processes and print their own figures; run only when named. */
const RUNNERS = new Map<string, () => BenchFigure[]>([
  ['trace', runTraceBenchmark],
  ['qualify', runQualifyBenchmark],
  ['loops', runLoopsBenchmark],
  ['scale', runScaleBenchmark],
  ['sweep', runSweepBenchmark],
]);

/** Every benchmark by name (own entries only: a Map, so "toString" is no benchmark). */
const KNOWN = new Map<string, unknown>([...BENCHMARKS, ...RUNNERS]);

function main(argv: string[]): number {
  const args = parseBenchArgs(argv);
  const names = selectBenchmarks(args.names, [...BENCHMARKS.keys()], KNOWN);
  const loadAtStart = os.loadavg()[0];
  process.stdout.write(`node ${process.version}, ${process.platform} ${process.arch}\n`);
  const figures: BenchFigure[] = [];
  for (const name of names) {
    const runner = RUNNERS.get(name);
    if (runner !== undefined) {
      const measured = runner();
      for (const figure of measured) process.stdout.write(`${describeTarget(figure)}\n`);
      figures.push(...measured);
      continue;
    }
    const make = BENCHMARKS.get(name);
    if (make === undefined) throw new BenchUsageError(`unknown benchmark ${name}`);
    const benchmark = make();
    const figure = measure(benchmark);
    figures.push(rateTarget(figure));
    process.stdout.write(`${describeFigure(figure)}\n`);
    if (benchmark.details) process.stdout.write(`  ${benchmark.details()}\n`);
    for (const target of benchmark.targets?.() ?? []) {
      process.stdout.write(`${describeTarget(target)}\n`);
      figures.push(target);
    }
  }
  const outcome = checkOutcome(figures, args.check);
  for (const line of outcome.lines) process.stdout.write(`${line}\n`);
  if (args.write) {
    const context = { machine: describeMachine(), node: process.version, date: `${new Date().toISOString().slice(0, 16)}Z`, load: [loadAtStart, os.loadavg()[0]] as [number, number], names: args.names };
    const file = writeResults(path.resolve(__dirname, '..'), resultsMarkdown(context, figures));
    process.stdout.write(`bench: results written to ${path.relative(process.cwd(), file)}\n`);
  }
  return outcome.status;
}

function run(argv: string[]): number {
  try {
    return main(argv);
  } catch (error) {
    if (!(error instanceof BenchUsageError)) throw error;
    process.stderr.write(`bench: ${error.message}\n`);
    return BENCH_USAGE_EXIT;
  }
}

process.exitCode = run(process.argv.slice(2));
