// Golden digests: what `kvqual replay` gives for every example config, recorded in
// test/fixtures/golden-digests.json, so that a change of results is seen and made on purpose. Two
// runs of one build always agree (determinism is checked everywhere); this pins what a build gives
// against what the last one gave: the report's digest (every request's figures) and, for the
// configs that need no published trace, the digest of the KV event log `--events-out` writes (the
// block hashes, HASH-1/2, and the events' order). The Mooncake examples need ../shared and are
// pinned on their first 200 requests (their 2,000 take seconds). The benchmarks' long runs (the
// whole trace, the e2e workload) are pinned in the same record, by report digest, and checked by
// `npm run golden -- --long` and the benchmarks (bench/longRuns.ts). Used by
// test/unit/golden-digests.test.ts and by `npm run golden`, which prints or records them.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPORT_VERSION } from '../../src/report/report';
import { kvqualInProcess } from './cli';
import { ROOT } from './paths';
import { traceFolder } from '../../src/traceFolder';

export const GOLDEN_FILE = path.join(ROOT, 'test', 'fixtures', 'golden-digests.json');
/** Where the published traces are, beside the checkout or where KVQUAL_TRACES says (src/traceFolder.ts); absent in a clone without them. */
export const SHARED = path.resolve(traceFolder(ROOT), '..', '..');
/** The Mooncake examples are pinned on this many of their requests. */
export const MOONCAKE_GOLDEN_REQUESTS = 200;

/** The example config folders whose every *.yaml is pinned. */
const EXAMPLE_FOLDERS = [path.join('examples', 'configs'), path.join('examples', 'agentic')];
/** How an example config names the published Mooncake trace (the examples read it from ../shared). */
const SHARED_TRACE = /^(\s*trace: )\.\.\/\.\.\/\.\.\/shared\/(data\/mooncake\/\S+)\s*$/m;
const MAX_REQUESTS = /^(\s*max_requests: )\d+\s*$/m;

/** What a run gives: the report's digest, and the event log's (null where it is not pinned). */
export interface GoldenDigests {
  report: string;
  events: string | null;
}

export interface GoldenRecord {
  /** REPORT_VERSION when the digests were recorded: a new version comes with new digests. */
  report_version: number;
  /** By run name (the example's path, and for a Mooncake example how much of it ran). */
  runs: Record<string, GoldenDigests>;
  /** The benchmarks' long runs' report digests, by run name (bench/longRuns.ts; `npm run golden -- --long`). */
  long_runs?: Record<string, string>;
}

export interface GoldenRun {
  name: string;
  /** The example config, from the repository's root. */
  example: string;
  /** Needs the published traces in ../shared. */
  needsShared: boolean;
}

/** Every example config, in name order, and how each is pinned. */
export function goldenRuns(): GoldenRun[] {
  const runs: GoldenRun[] = [];
  for (const folder of EXAMPLE_FOLDERS) {
    const names = fs.readdirSync(path.join(ROOT, folder)).filter((name) => name.endsWith('.yaml')).sort();
    for (const name of names) {
      const example = path.join(folder, name).split(path.sep).join('/');
      const needsShared = SHARED_TRACE.test(fs.readFileSync(path.join(ROOT, example), 'utf8'));
      runs.push({ name: needsShared ? `${example}, first ${MOONCAKE_GOLDEN_REQUESTS} requests` : example, example, needsShared });
    }
  }
  return runs;
}

function sha256(bytes: string | Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * A Mooncake example cut to its first MOONCAKE_GOLDEN_REQUESTS requests, written into `dir` with
 * the files it names beside it (a pass-time table) and the published trace by its absolute path.
 */
function cutMooncakeExample(example: string, dir: string): string {
  const source = path.join(ROOT, example);
  const text = fs.readFileSync(source, 'utf8');
  if (!MAX_REQUESTS.test(text)) throw new Error(`${example}: no max_requests to cut the trace to ${MOONCAKE_GOLDEN_REQUESTS} requests`);
  const cut = text
    .replace(SHARED_TRACE, (_, key: string, rest: string) => `${key}${JSON.stringify(path.join(SHARED, rest))}`)
    .replace(MAX_REQUESTS, (_, key: string) => `${key}${MOONCAKE_GOLDEN_REQUESTS}`);
  for (const name of fs.readdirSync(path.dirname(source))) {
    if (name.endsWith('.csv')) fs.copyFileSync(path.join(path.dirname(source), name), path.join(dir, name));
  }
  const file = path.join(dir, path.basename(example));
  fs.writeFileSync(file, cut);
  return file;
}

/** Replays one pinned run through the command line (in this process) and digests what it gave. */
export function measureGolden(run: GoldenRun): GoldenDigests {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-golden-'));
  try {
    const config = run.needsShared ? cutMooncakeExample(run.example, dir) : path.join(ROOT, run.example);
    const events = path.join(dir, 'events.jsonl');
    const args = run.needsShared ? ['replay', config, '--json', '--trace-root', path.join(SHARED, 'data')] : ['replay', config, '--json', '--events-out', events];
    const result = kvqualInProcess(args);
    if (result.status !== 0) throw new Error(`kvqual ${args.join(' ')} exited ${result.status}: ${result.stderr.slice(0, 500)}`);
    const report = JSON.parse(result.stdout) as { digest: string; report_version: number };
    if (report.report_version !== REPORT_VERSION) throw new Error(`${run.name}: report_version ${report.report_version}, expected ${REPORT_VERSION}`);
    return { report: report.digest, events: run.needsShared ? null : sha256(fs.readFileSync(events)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function readGolden(): GoldenRecord {
  return JSON.parse(fs.readFileSync(GOLDEN_FILE, 'utf8')) as GoldenRecord;
}

/** The record of `runs` (and the long runs' digests) as `npm run golden -- --write` writes it. */
export function goldenText(runs: Record<string, GoldenDigests>, long_runs: Record<string, string>): string {
  const record: GoldenRecord = { report_version: REPORT_VERSION, runs, long_runs };
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** What to do when a digest moved, for the failure message and the script. */
export const GOLDEN_ADVICE =
  'If the results changed on purpose, say why in docs/model.md (and bump REPORT_VERSION in src/report/report.ts when a report of the same run reads differently), then record them: npm run golden -- --write (with --long for the long runs of the benchmarks: the whole trace and the e2e workload)';

/**
 * Why `npm run golden -- --write` must not record, or null: example runs that moved mean the
 * simulator or its report changed, and the long runs of the benchmarks run the same code, so
 * recording the examples alone would leave the long runs' record stale (the benchmarks then print
 * MOVED for a change nobody looked at).
 */
export function writeRefusal(options: { long: boolean; movedExamples: number }): string | null {
  if (options.long || options.movedExamples === 0) return null;
  return `${options.movedExamples} example run(s) moved, so the long runs of the benchmarks (same simulator) most likely moved too: record them together with npm run golden -- --long --write`;
}
