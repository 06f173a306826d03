// Runs `npm run qualify` for tests, two ways. In this process (qualifyInProcess: scripts/qualify.ts's
// qualifyWith with a console that is collected): what most qualification tests check is the
// sign-off a run publishes, its exit status and what it prints, and a process per run costs a Node
// start and a load of the driver, the report and its libraries each time. Its suite runs on tsx
// and its planted-fault check run in this process too, through cucumber's API
// (scripts/suiteInProcess.ts: the steps loaded once, cucumber's own formatters and exit status), unless
// the test asks for the driver's real processes (`processes`: what only a process shows, such as
// code loaded into it by NODE_OPTIONS); the compiled coverage run and the isolation proof's alone
// runs are processes either way. As a real `node scripts/qualify.ts` process (qualifyProcess): kept
// for what only a process shows (its wiring, its streams), a few per test file. As one process
// whose suite runs are made in it (qualifyOneProcess, test/support/qualify-one-process.ts): for a
// kill, which only a process can be given, at one Node start and one load of the steps.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { qualifyWith } from '../../scripts/qualify';
import { environmentOutsideRuns, IN_PROCESS_SUITE_RUNNER } from '../../scripts/suiteInProcess';
import { ROOT } from './paths';
import type { SuiteRunner } from '../../src/signoff/suiteRunner';

export interface QualifyRun {
  status: number | null;
  /** Standard output and error as they came. */
  output: string;
  stdout: string;
  stderr: string;
}

/** The test doubles a run gets only when the test gives them (a developer's shell may have one set). */
const TEST_DOUBLES = ['KVQUAL_PERTURB', 'KVQUAL_FUZZ_PLANT', 'KVQUAL_SIM_FAULT', 'KVQUAL_SIGNING_KEY'];

/** This process's variables with `env` added, and without a test double `env` does not give. */
export function qualifyEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // (Not process.env itself, which holds an in-process suite run's own while it runs.)
  const merged = { ...environmentOutsideRuns(), ...env };
  for (const double of TEST_DOUBLES) if (!(double in env)) delete merged[double];
  return merged;
}

/**
 * `npm run qualify -- ARGS` in this process, from the repository, with `env` added to this
 * process's variables (test doubles only when given); its suite runs in this process too (or through
 * the `suiteRunner` given), or with `processes` as the driver's real processes (as `npm run qualify`
 * makes them). The compiled
 * coverage run gets a temporary folder of its own, removed when the run ends.
 */
export async function qualifyInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, how: { processes?: boolean; suiteRunner?: SuiteRunner } = {}): Promise<QualifyRun> {
  let output = '';
  let stdout = '';
  let stderr = '';
  const coverageTemp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-qualify-test-'));
  try {
    const io = {
      out: (text: string) => void ((stdout += text), (output += text)),
      err: (text: string) => void ((stderr += text), (output += text)),
      env: qualifyEnv(env),
      coverageTemp,
      suiteRunner: how.processes ? undefined : (how.suiteRunner ?? IN_PROCESS_SUITE_RUNNER),
    };
    const status = await qualifyWith([...args], io);
    return { status, output, stdout, stderr };
  } finally {
    fs.rmSync(coverageTemp, { recursive: true, force: true });
  }
}

/** `node scripts/qualify.ts ARGS` as a real process from `cwd` (the repository by default); `onSpawn` sees the child (to stop it). */
export function qualifyProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, onSpawn?: (child: ChildProcess) => void, cwd = ROOT): Promise<QualifyRun> {
  return qualifyScript(path.join(ROOT, 'scripts', 'qualify.ts'), args, env, onSpawn, cwd);
}

/**
 * `npm run qualify -- ARGS` as one real process whose suite runs are made in it
 * (test/support/qualify-one-process.ts), not in processes of their own: what only the process
 * shows apart from its suite runs (a kill), for a Node start and a load of the steps.
 */
export function qualifyOneProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, onSpawn?: (child: ChildProcess) => void): Promise<QualifyRun> {
  return qualifyScript(path.join(ROOT, 'test', 'support', 'qualify-one-process.ts'), args, env, onSpawn, ROOT);
}

function qualifyScript(script: string, args: readonly string[], env: NodeJS.ProcessEnv, onSpawn: ((child: ChildProcess) => void) | undefined, cwd: string): Promise<QualifyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', script, ...args], { cwd, env: qualifyEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    onSpawn?.(child);
    let output = '';
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), (output += chunk)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => ((stderr += chunk), (output += chunk)));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output, stdout, stderr }));
  });
}
