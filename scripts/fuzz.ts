// `npm run fuzz -- --runs N --seed S`: runs N generated replay cases through the cluster with
// fast-check, checks every invariant after each (src/fuzz/invariants.ts), and on a failure shrinks
// it, prints `{ seed, path }` and writes the shrunk case under reports/fuzz/ as a `kvqual replay`
// config (plus its agentic trace) and as a Gherkin feature. `--check FILE.yaml` checks a written
// case again. Exit 0 when every invariant held, 1 when one failed, 2 for bad arguments or input.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFECT_AREAS, parseDefectAreas, type DefectArea, type FuzzCase } from '../src/fuzz/generate';
import { checkFuzzPath, FuzzPathError, MAX_FUZZ_PATH_PART, runFuzzCampaign } from '../src/fuzz/campaign';
import { fuzzCaseCommand } from '../src/fuzz/command';
import { runCase, TOO_HEAVY_MEANING } from '../src/fuzz/runCase';
import { INVARIANT_CLAIMS, INVARIANTS, type InvariantName, type Violation } from '../src/fuzz/invariants';
import { agenticTraceName, caseFiles, caseFromYaml } from '../src/fuzz/scenario';
import { OutputError, planOutputs, writeOutputs } from '../src/cli/outputs';
import { ConfigError, yamlProblem } from '../src/config/load';
import { InputFileError, readTextFile } from '../src/inputFiles';
import { LIMITS } from '../src/limits';
import { isInputError } from '../src/cli/replay';
import { PLANTED_DEFECT_ENV, PLANTED_DEFECT_MEANING, plantedCommandPrefix, plantedDefectAsked } from '../src/fuzz/planted';

const USAGE = `usage: npm run fuzz -- [--runs N] [--seed S] [--path P] [--exclude AREAS] [--out DIR] [--check FILE.yaml]
  --runs N         generated cases to run (default 1000)
  --seed S         fast-check seed (default: from the clock, printed)
  --path P         replay only the counterexample at this path (needs its --seed; parts at most ${MAX_FUZZ_PATH_PART})
  --exclude AREAS  leave out generator areas with a known defect: "known", "none" (default) or a
                   comma list of ${DEFECT_AREAS.join(', ')}
  --only NAMES     fail only on these invariants (a comma list of ${INVARIANTS.join(', ')})
  --out DIR        where counterexamples are written (default reports/fuzz)
  --check FILE     check the invariants of a written case (its config; the trace beside it)
${PLANTED_DEFECT_ENV}=1 plants the test double's defect: ${PLANTED_DEFECT_MEANING}`;

class UsageError extends Error {}

/** Where a run writes, and the variables it reads (KVQUAL_FUZZ_PLANT). */
export interface FuzzIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

function wholeNumber(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag} ${text}: expected a whole number`);
  return Number(text);
}

function printViolations(io: FuzzIo, violations: readonly Violation[]): void {
  for (const violation of violations) io.out(`  ✗ ${INVARIANT_CLAIMS[violation.invariant]}: ${violation.message}\n`);
}

/** Says so before anything runs when the test double's defect is planted. */
function announcePlantedDefect(io: FuzzIo, planted: boolean): void {
  if (planted) io.out(`fuzz: TEST DOUBLE ACTIVE (${PLANTED_DEFECT_ENV}=1): ${PLANTED_DEFECT_MEANING}\n`);
}

/** The agentic trace beside a checked case is read whole: a generated one is a few KB. */
const MAX_CHECKED_TRACE_BYTES = 256 * 1024 * 1024;

/** --check: runs a written case again and prints what broke. */
function checkFile(io: FuzzIo, file: string, planted: boolean): number {
  announcePlantedDefect(io, planted);
  let fuzzCase: FuzzCase;
  try {
    // Read as kvqual reads a config: a regular file (never /dev/zero or a FIFO) within the size limit.
    const configText = readTextFile(file, file, LIMITS.config_bytes, 'config');
    const probe = caseFromYaml(configText, null);
    if (probe.config === null || probe.config === undefined) throw new InputFileError(`${file}: the file holds no case (it is empty); expected a config written by npm run fuzz`);
    if (typeof probe.config !== 'object' || Array.isArray(probe.config)) throw new InputFileError(`${file}: the file is not a config (a YAML mapping); expected a config written by npm run fuzz`);
    const traceName = agenticTraceName(probe.config);
    const traceText = traceName === null ? null : readTextFile(path.resolve(path.dirname(file), traceName), traceName, MAX_CHECKED_TRACE_BYTES, 'trace of a checked case');
    fuzzCase = caseFromYaml(configText, traceText);
  } catch (error) {
    if (error instanceof InputFileError) {
      io.err(`fuzz --check: ${error.message}\n`);
      return 2;
    }
    // The YAML reader's message is several lines (the line quoted, a caret): its first says where and what.
    io.err(`fuzz --check: cannot read ${file}: ${yamlProblem((error as Error).message.split('\n')[0].replace(/:$/, ''))}\n`);
    return 2;
  }
  let violations: Violation[];
  try {
    const verdict = runCase(fuzzCase, { planted_defect: planted });
    if (verdict.too_heavy) {
      io.out(`${file}: not checked, too heavy: ${verdict.first.error?.message}\n`);
      return 1;
    }
    violations = verdict.violations;
  } catch (error) {
    // A bad config, or a bad trace beside it (e.g. an agentic row kvqual refuses): exit 2, one message.
    if (!(error instanceof ConfigError) && !isInputError(error)) throw error;
    io.err(`fuzz --check: ${error.message}\n`);
    return 2;
  }
  if (violations.length === 0) {
    io.out(`${file}: every invariant holds\n`);
    return 0;
  }
  io.out(`${file}: ${violations.length} invariant violation(s)\n`);
  printViolations(io, violations);
  return 1;
}

function parseInvariants(text: string | undefined): InvariantName[] {
  if (text === undefined) return [...INVARIANTS];
  return text.split(',').map((name) => {
    if (!(INVARIANTS as readonly string[]).includes(name.trim())) throw new UsageError(`--only: unknown invariant "${name.trim()}"; known: ${INVARIANTS.join(', ')}`);
    return name.trim() as InvariantName;
  });
}

/**
 * Checks --out before any case runs (a campaign and its shrinking can take minutes): an existing
 * DIR must be a folder this process can write in; a missing one must be in a folder that exists
 * and can be written (as planOutputs checks an output file's folder), and is made only when a
 * counterexample is written. Throws OutputError naming --out.
 */
function checkOutFolder(out: string): void {
  if (out === '') throw new OutputError('--out: give a folder');
  let stats: fs.Stats | null = null;
  try {
    stats = fs.statSync(out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new OutputError(`--out ${out}: cannot be used (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (stats === null) {
    // Checks its parent: exists, is a folder, can be written; DIR itself is not there yet.
    planOutputs([{ option: '--out', file: out.replace(/[\\/]+$/, '') }], process.cwd(), []);
    return;
  }
  if (!stats.isDirectory()) throw new OutputError(`--out ${out}: is not a folder; give a folder for the counterexample's files`);
  try {
    fs.accessSync(out, fs.constants.W_OK);
  } catch {
    throw new OutputError(`--out ${out}: cannot write in this folder (permission denied)`);
  }
}

/** While a counterexample shrinks (each smaller case a whole run, a heavy one tens of seconds), a line at most this often. */
const SHRINK_NEWS_EVERY_MS = 10_000;

function fuzz(io: FuzzIo, options: { runs: number; seed: number; path: string | undefined; exclude: DefectArea[]; only: InvariantName[]; out: string; planted_defect: boolean }): number {
  const started = Date.now();
  const excluded = options.exclude.length === 0 ? 'none' : options.exclude.join(', ');
  const watched = options.only.length === INVARIANTS.length ? '' : `; failing only on ${options.only.join(', ')}`;
  io.out(`fuzz: ${options.runs} generated cases, seed ${options.seed}${options.path ? `, path ${options.path}` : ''}; excluded areas: ${excluded}${watched}\n`);
  announcePlantedDefect(io, options.planted_defect);
  const plant = plantedCommandPrefix(options.planted_defect);
  // Run again with what this campaign ran with.
  const rerun = (seed: number, at: string, alone = false) =>
    fuzzCaseCommand({ seed, path: at, alone, exclude: options.exclude, only: watched ? options.only : undefined, planted: options.planted_defect });
  let failures = 0;
  let firstFailure = 0;
  let lastSaid = started;
  const every = Math.max(100, Math.ceil(options.runs / 10));
  // When the last case ended: a too-heavy case's time is from then (it is told of before its onCase).
  let lastCaseEnded = started;
  const result = runFuzzCampaign({
    ...options,
    onTooHeavy: (heavy) => {
      const again = heavy.path === null ? '' : `; alone: ${rerun(options.seed, heavy.path, true)}`;
      io.out(`fuzz: case ${heavy.case_number} too heavy to check, not checked (${((Date.now() - lastCaseEnded) / 1000).toFixed(1)} s): ${heavy.reason}${again}\n`);
    },
    onCase: (executed, violations) => {
      lastCaseEnded = Date.now();
      if (failures === 0 && violations.length > 0) {
        failures++;
        firstFailure = executed;
        lastSaid = Date.now();
        // Shrinking a heavy case can take long: the case as found can be replayed meanwhile (fast-check's path of a case is its index).
        const asFound = options.path === undefined ? ` (as found: ${rerun(options.seed, String(executed - 1))})` : '';
        io.out(`fuzz: case ${executed} broke an invariant; shrinking…${asFound}\n`);
      } else if (failures > 0) {
        if (violations.length > 0) failures++;
        if (Date.now() - lastSaid >= SHRINK_NEWS_EVERY_MS) {
          lastSaid = Date.now();
          io.out(`fuzz: shrinking: ${executed - firstFailure} smaller case(s) tried, ${failures - 1} of them still failing (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
        }
      } else if (executed % every === 0) {
        io.out(`fuzz: ${executed}/${options.runs} cases passed (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
      }
    },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const found = result.counterexample;
  if (found === null) {
    const heavy = result.too_heavy > 0 ? `; ${result.too_heavy} of them too heavy to check (${TOO_HEAVY_MEANING}), not checked` : '';
    io.out(`fuzz: ${result.passed} cases passed every invariant in ${seconds} s (seed ${options.seed})${heavy}\n`);
    return 0;
  }
  const origin = { seed: found.seed, path: found.path };
  io.out(`fuzz: case ${found.case_number} of ${options.runs} failed after ${seconds} s; shrunk ${found.shrinks} time(s)\n`);
  io.out(`counterexample: ${JSON.stringify(origin)}\n`);
  printViolations(io, found.violations);
  const files = caseFiles(found.fuzz_case, { origin, violations: found.violations, folder: options.out, planted_defect: options.planted_defect });
  const written = [files.config, files.trace, files.feature].filter((file): file is { name: string; content: string } => file !== null);
  // Written as kvqual's own outputs are: temporary files, renamed into place only when all are written.
  try {
    try {
      fs.mkdirSync(options.out, { recursive: true });
    } catch (error) {
      throw new OutputError(`--out ${options.out}: cannot make the folder (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const planned = planOutputs(written.map((file) => ({ option: '--out', file: path.join(options.out, file.name) })), process.cwd(), []);
    writeOutputs(planned.map((output, i) => ({ output, text: written[i].content })));
  } catch (error) {
    // The folder was checked before the campaign; it can still change, or the disk fill, meanwhile.
    if (!(error instanceof OutputError)) throw error;
    io.err(`fuzz: ${error.message}\n`);
    return 2;
  }
  io.out(`written: ${written.map((file) => path.join(options.out, file.name)).join(', ')}\n`);
  // With the planted defect, the counterexample reproduces only with it planted again (plant).
  io.out(`replay it:  npx kvqual replay ${path.join(options.out, files.config.name)}\n`);
  io.out(`check it:   ${plant}npm run fuzz -- --check ${path.join(options.out, files.config.name)}\n`);
  io.out(`rerun it:   ${rerun(origin.seed, origin.path)}\n`);
  io.out(options.planted_defect ? `scenario:   ${plant}npx cucumber-js --profile replay ${path.join(options.out, files.feature.name)} (it fails only with the defect planted)\n` : `scenario:   move ${path.join(options.out, files.feature.name)} into features/ (it fails until the invariant holds)\n`);
  return 1;
}

/** `npm run fuzz -- ARGV` with this console and these variables; returns the exit status (the tests run it in their own process). */
export function runFuzz(argv: string[], io: FuzzIo): number {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        runs: { type: 'string' },
        seed: { type: 'string' },
        path: { type: 'string' },
        exclude: { type: 'string' },
        only: { type: 'string' },
        out: { type: 'string' },
        check: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
    if (values.help) {
      io.out(`${USAGE}\n`);
      return 0;
    }
    let planted: boolean;
    try {
      planted = plantedDefectAsked(io.env);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    if (values.check !== undefined) return checkFile(io, values.check, planted);
    const runs = wholeNumber(values.runs, '--runs', 1000);
    if (runs <= 0) throw new UsageError(`--runs ${runs}: expected at least 1`);
    let exclude: DefectArea[];
    try {
      exclude = parseDefectAreas(values.exclude ?? 'none');
    } catch (error) {
      throw new UsageError(`--exclude: ${(error as Error).message}`);
    }
    const only = parseInvariants(values.only);
    if (values.path !== undefined) {
      // A path indexes the cases of one seed's stream: with a clock seed it names an unrelated case.
      if (values.seed === undefined) throw new FuzzPathError(`--path ${values.path}: give the --seed it was found with (a path names a case of one seed's cases only)`);
      checkFuzzPath(values.path);
    }
    const out = values.out ?? path.join('reports', 'fuzz');
    checkOutFolder(out);
    return fuzz(io, { runs, seed: wholeNumber(values.seed, '--seed', Date.now() % 2 ** 31), path: values.path, exclude, only, out, planted_defect: planted });
  } catch (error) {
    if (error instanceof FuzzPathError || error instanceof OutputError) {
      io.err(`fuzz: ${error.message}\n`);
      return 2;
    }
    if (!(error instanceof UsageError) && !(error instanceof TypeError && 'code' in error)) throw error;
    io.err(`fuzz: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
}

if (require.main === module) process.exitCode = runFuzz(process.argv.slice(2), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text), env: process.env });
