// Runs `npm run qualify` for tests, two ways. In this process (qualifyInProcess: scripts/qualify.ts's
// qualifyWith with a console that is collected): what most qualification tests check is the
// sign-off a run publishes, its exit status and what it prints, and a process per run costs a Node
// start and a load of the driver, the report and its libraries each time; the suite runs, the
// planted-fault check and the coverage run are the driver's own processes either way. As a real
// `node scripts/qualify.ts` process (qualifyProcess): kept for what only a process shows (its
// wiring, its streams, a kill), a few per test file.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { qualifyWith } from '../../scripts/qualify';
import { ROOT } from './paths';

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
  const merged = { ...process.env, ...env };
  for (const double of TEST_DOUBLES) if (!(double in env)) delete merged[double];
  return merged;
}

/**
 * `npm run qualify -- ARGS` in this process, from the repository, with `env` added to this
 * process's variables (test doubles only when given). The compiled coverage run gets a temporary
 * folder of its own, removed when the run ends.
 */
export async function qualifyInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<QualifyRun> {
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
    };
    const status = await qualifyWith([...args], io);
    return { status, output, stdout, stderr };
  } finally {
    fs.rmSync(coverageTemp, { recursive: true, force: true });
  }
}

/** `node scripts/qualify.ts ARGS` as a real process from `cwd` (the repository by default); `onSpawn` sees the child (to stop it). */
export function qualifyProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, onSpawn?: (child: ChildProcess) => void, cwd = ROOT): Promise<QualifyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'qualify.ts'), ...args], { cwd, env: qualifyEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
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
