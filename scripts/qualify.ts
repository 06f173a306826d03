// `npm run qualify` (and `kvqual qualify`): the main job. Checks its arguments and inputs first (a usage or registry
// error prints one line and exits 2 before anything is deleted), runs the feature suite twice
// with cucumber's HTML, JUnit and message reports, runs generated workloads against the
// simulator's invariants (as `npm run fuzz`), measures c8 coverage of src/ over the
// esbuild-compiled JavaScript while the features run again (a failure there, or a type error,
// fails the verdict), then publishes the sign-off (signoff.md, signoff.html, signoff-assets/) and
// the reports as one set. The work is in src/signoff/driver.ts; this script gives it the clock,
// git and the console (on a terminal, a live status line: bin/progress.js). Exits 0 when the computed verdict is QUALIFIED, 1 when NOT QUALIFIED, 2 when it could not run,
// 3 when every gate passed but the run was narrowed (PASSED — NOT A RELEASE SIGN-OFF, src/signoff/narrowed.ts).
//
//   npm run qualify [-- --features DIR] [--requirements FILE] [--out DIR] [--campaign NAME] [--baseline FILE] [--no-coverage] [--fuzz-runs N]
//
//   npm run qualify -- --shard i/n [same options but --campaign, --baseline]   (its share only: streams and shard.json, no sign-off)
//   npm run qualify -- --merge DIR… [--requirements FILE] [--out DIR] [--campaign NAME] [--baseline FILE]
//
// For a merge it also renders cucumber's HTML and JUnit reports from the merged message stream,
// with cucumber's own formatters (they live in node_modules/@cucumber, which src/ never imports).
//
// git runs with the caller's GIT_* variables cleared and without replace refs; a link out of the
// checkout or a git filter on what a run loads is refused (exit 2), and the files are compared with
// the commit's blobs by content (src/signoff/provenance.ts). KVQUAL_SIGNING_KEY signs a shard's
// manifest and makes the merge refuse a shard not signed with it (src/signoff/shardTrust.ts).
//
// KVQUAL_PERTURB=<part of a scenario name> is passed to the second run only (test double of the
// determinism proof; see steps/support/perturb.ts); KVQUAL_SEED applies to both runs and seeds the
// generated workloads (default 1893). The compiled coverage run gets a temporary folder of its own,
// removed when qualify exits or is stopped by a signal (and by the next run, after a kill -9).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DriverContext, parseQualifyArgs, prepare, qualify, QUALIFY_USAGE, stopChildren, UsageError } from '../src/signoff/driver';
import type { Subject } from '../src/signoff/model';
import type { PhaseStatus } from '../src/signoff/context';
import type { SuiteRunner } from '../src/signoff/suiteRunner';
import { processAlive } from '../src/processes';
import { worktreeDifferences, worktreeText } from '../src/signoff/worktree';
import { contentDifferences, filteredPaths, gitEnvironment, GIT_SAFE_ARGS, LOADED_PATHS } from '../src/signoff/provenance';
import { figureCacheFromEnv } from '../steps/support/figureCache';
import { GuardedStream } from '../src/cli/io';
import { reason } from '../src/inputFiles';

/** The repository: above scripts/, or above build/qualify/ when this runs from its bundle (bin/compiled.js). */
const ROOT = path.resolve(__dirname, __filename.endsWith('.ts') ? '..' : path.join('..', '..'));

/** git in the checkout, with the caller's GIT_* variables cleared and replace refs not followed (provenance.ts). */
function git(args: string[]): string | null {
  const result = spawnSync('git', [...GIT_SAFE_ARGS, ...args], { cwd: ROOT, encoding: 'utf8', env: gitEnvironment(process.env), maxBuffer: 64 * 1024 * 1024 });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** The working tree's differences from the commit: what git says (worktree.ts), and the files whose content is not the commit's blob. */
function differences(): string[] | null {
  const listed = worktreeDifferences(git);
  if (listed === null) return null;
  return [...new Set([...listed, ...(contentDifferences(ROOT, git) ?? [])])].sort();
}

function subject(): Subject {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const commit = git(['rev-parse', 'HEAD']);
  return {
    packageName: pkg.name,
    packageVersion: pkg.version,
    commit: commit ?? 'unknown (not a git checkout)',
    worktree: worktreeText(commit === null ? null : differences()),
    node: process.version,
  };
}

/** Cucumber's HTML and JUnit reports of a message stream, by cucumber's own formatters (loaded here: only a merge needs them). */
async function cucumberReports(ndjson: string): Promise<{ html: string; junit: string }> {
  const { CucumberHtmlStream } = require('@cucumber/html-formatter') as typeof import('@cucumber/html-formatter');
  const { JUnitXmlPrinter } = require('@cucumber/junit-xml-formatter') as typeof import('@cucumber/junit-xml-formatter');
  const envelopes = ndjson
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
  let junit = '';
  const printer = new JUnitXmlPrinter({}, (text: string) => (junit += text));
  for (const envelope of envelopes) printer.update(envelope);
  const html = await new Promise<string>((resolve, reject) => {
    const stream = new CucumberHtmlStream();
    let text = '';
    stream.on('data', (chunk: Buffer | string) => (text += chunk));
    stream.on('end', () => resolve(text));
    stream.on('error', reject);
    for (const envelope of envelopes) stream.write(envelope);
    stream.end();
  });
  return { html, junit };
}

// The console is guarded (src/cli/io.ts): `npm run qualify | head` or a full disk under standard
// output no longer kills the sign-off with a stack and exit 1 (NOT QUALIFIED) before it publishes.
const out = new GuardedStream(process.stdout);
const err = new GuardedStream(process.stderr);

/**
 * The temporary folder of the compiled coverage run (its unit tests make scratch folders, which a
 * stopped run would leave): kvqual-qualify-<pid>-XXXXXX, removed when this run exits, however it
 * exits but killed outright; one left by a run killed outright (its process gone) is removed by the next.
 */
function coverageTempFolder(): string {
  const base = os.tmpdir();
  for (const name of fs.readdirSync(base)) {
    const left = /^kvqual-qualify-(\d+)-/.exec(name);
    if (left === null || processAlive(Number(left[1]))) continue;
    try {
      fs.rmSync(path.join(base, name), { recursive: true, force: true });
    } catch {
      // Another user's: not ours to remove.
    }
  }
  const folder = fs.mkdtempSync(path.join(base, `kvqual-qualify-${process.pid}-`));
  process.on('exit', () => fs.rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** On a terminal, the phases' live status line (bin/progress.js, cli-progress); null when piped. */
const terminalProgress = (): PhaseProgress | null => (require('../bin/progress.js') as { phaseProgress(stream: NodeJS.WriteStream): PhaseProgress | null }).phaseProgress(process.stdout);
interface PhaseProgress {
  start(status: () => PhaseStatus): { stop(): void };
  write(text: string): void;
  stop(): void;
}

/** Where a qualification writes and what it reads from its caller: the process's own streams and variables, or (tests) ones given. */
export interface QualifyIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** The compiled coverage run's temporary folder (its caller removes it); without one, the run's scratch folders go to the system's. */
  coverageTemp?: string;
  /** The terminal's width, when the console is one (lines are fitted to it; 100 characters otherwise). */
  columns?: number;
  /** On a terminal, the live status line that `out` writes above; absent when piped. */
  progress?: PhaseProgress | null;
  /** How the suite runs are made (the tests': in their own process); real processes without it. */
  suiteRunner?: SuiteRunner;
}

/** The driver's context: the clock, git, the console and the figure cache of this checkout. */
export function driverContext(io: QualifyIo): DriverContext {
  return {
    cucumberReports,
    root: ROOT,
    env: io.env,
    now: () => Date.now(),
    date: () => `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    subject,
    write: (text) => (io.progress ? io.progress.write(text) : io.out(text)),
    columns: io.columns,
    liveStatus: io.progress ? (status) => io.progress!.start(status) : undefined,
    figureCache: figureCacheFromEnv(io.env),
    coverageTemp: io.coverageTemp,
    git,
    nonce: () => randomBytes(16).toString('hex'),
    suiteRunner: io.suiteRunner,
  };
}

async function main(argv: string[], io: QualifyIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(`${QUALIFY_USAGE}\n`);
    return 0;
  }
  const options = parseQualifyArgs(argv);
  // A clean or smudge filter makes git compare another content than the file's: refused before anything runs.
  const filtered = git(['rev-parse', 'HEAD']) === null ? [] : filteredPaths(git, [...LOADED_PATHS, path.relative(ROOT, path.resolve(options.requirements))].filter((p) => !p.startsWith('..')));
  if (filtered.length > 0) throw new UsageError(`what ran would not be what the commit holds: ${filtered.join('; ')}; refused (remove the filter attribute)`);
  const prepared = prepare(options, ROOT, io.env);
  return (await qualify(prepared, driverContext(io))).status;
}

/**
 * The sign-off with these arguments and this console, resolved with its exit status (a usage or
 * input error is one line on `io.err`, status 2): runQualify runs it on the process's own, the
 * tests in their own process.
 */
export const qualifyWith = (argv: string[], io: QualifyIo): Promise<number> =>
  main(argv, io).catch((error: Error) => {
    const message = error instanceof UsageError ? `qualify: ${error.message}` : `qualify could not complete: ${error.message.split('\n')[0]}`;
    io.err(`${message}\n`);
    if (!(error instanceof UsageError) && io.env.KVQUAL_DEBUG) io.err(`${error.stack}\n`);
    return 2;
  });

/** Stopped by a signal (Ctrl-C, a CI timeout): the suite runs it started stop too, then the process exits as the signal would. */
function stopOnSignals(progress: PhaseProgress | null): void {
  for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15]] as const) {
    process.once(signal, () => {
      stopChildren(signal);
      progress?.stop();
      err.write(`qualify: stopped by ${signal}; the last published sign-off is unchanged\n`);
      process.exit(128 + number);
    });
  }
}

/** The sign-off with these arguments, resolved with its exit status: `npm run qualify` (below) and `kvqual qualify` (bin/kvqual.js) run it. */
export const runQualify = (argv: string[]): Promise<number> => {
  const progress = terminalProgress();
  stopOnSignals(progress);
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  // The coverage run's temporary folder is made (and what a killed run left removed) first, even for --help.
  return qualifyWith(argv, { out: (text) => out.write(text), err: (text) => err.write(text), env: process.env, coverageTemp: coverageTempFolder(), columns, progress }).then((code) => {
    // The sign-off is published and its status is the verdict's; a console that could not be written is said, not counted.
    if (out.failure !== null) err.write(`qualify: standard output: cannot write it (${reason(out.failure)}); what was printed is incomplete\n`);
    return code;
  });
};

if (require.main === module) void runQualify(process.argv.slice(2)).then((code) => process.exit(code));
