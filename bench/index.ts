// `npm run bench [-- name …] [--check]`: runs the named benchmarks (the default set when none is
// named) and prints each figure with its target and whether it met it; with --check, exits 1 when
// any target of the benchmarks run was missed (for people comparing before and after on one
// machine, not a CI gate: timings are noisy). Add a benchmark to BENCHMARKS or RUNNERS.
import type { BenchFigure, Benchmark } from './harness';
import { checkOutcome, describeFigure, describeTarget, measure, parseBenchArgs, rateTarget } from './harness';
import { kernelBenchmark } from './kernel';
import { routerBenchmark } from './router';
import { endToEndBenchmark } from './endToEnd';
import { runScaleBenchmark } from './scale';
import { runSweepBenchmark } from './sweep';
import { runTraceBenchmark } from './trace';
import { runQualifyBenchmark } from './qualify';

/** Rate benchmarks run by the harness (warm-up, three timed passes): the default set. */
const BENCHMARKS: Record<string, () => Benchmark> = {
  kernel: kernelBenchmark,
  router: routerBenchmark,
  e2e: endToEndBenchmark,
};

/** Benchmarks that run fresh processes and print their own figures; run only when named. */
const RUNNERS: Record<string, () => BenchFigure[]> = {
  trace: runTraceBenchmark,
  qualify: runQualifyBenchmark,
  scale: runScaleBenchmark,
  sweep: runSweepBenchmark,
};

function selectedNames(names: string[]): string[] {
  const chosen = names.length === 0 ? Object.keys(BENCHMARKS) : names;
  const unknown = chosen.filter((name) => !(name in BENCHMARKS) && !(name in RUNNERS));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${[...Object.keys(BENCHMARKS), ...Object.keys(RUNNERS)].join(', ')}`);
  }
  return chosen;
}

function main(argv: string[]): number {
  const args = parseBenchArgs(argv);
  const names = selectedNames(args.names);
  process.stdout.write(`node ${process.version}, ${process.platform} ${process.arch}\n`);
  const figures: BenchFigure[] = [];
  for (const name of names) {
    if (name in RUNNERS) {
      const measured = RUNNERS[name]();
      for (const figure of measured) process.stdout.write(`${describeTarget(figure)}\n`);
      figures.push(...measured);
      continue;
    }
    const benchmark = BENCHMARKS[name]();
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
  return outcome.status;
}

process.exitCode = main(process.argv.slice(2));
