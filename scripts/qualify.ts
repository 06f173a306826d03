// `npm run qualify`: the main job. Runs the feature suite with cucumber's HTML, JUnit and message
// reports, runs it a second time to prove determinism (per-scenario digests from the evidence
// attachments), measures c8 coverage of src/ over the tsc-compiled JavaScript, then writes the
// sign-off (signoff.md, signoff.html, signoff-assets/) from the message streams, atomically.
// Exits 0 when the computed verdict is QUALIFIED, 1 when NOT QUALIFIED, 2 when it could not run.
// This driver may read the clock (the date line) and git; the library in src/report may not.
//
//   npm run qualify [-- --features DIR] [--requirements FILE] [--out DIR] [--campaign NAME] [--no-coverage]
//
// KVQUAL_PERTURB=<part of a scenario name> is passed to the second run only (test double of the
// determinism proof; see steps/support/perturb.ts); KVQUAL_SEED applies to both runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compareRuns } from '../src/signoff/determinism';
import { CoverageSummary, summariseCoverage } from '../src/signoff/coverage';
import { renderFigure } from '../src/report/figure';
import { parseRegistry } from '../src/signoff/requirements';
import { parseRun, RunModel } from '../src/signoff/messages';
import { anchorOf, buildSignoff, RERUN_MESSAGES, Subject } from '../src/signoff/model';
import { renderHtml } from '../src/signoff/html';
import { ASSETS_DIR, renderMarkdown } from '../src/signoff/markdown';
import { replaceDirAtomic, writeFileAtomic } from '../src/signoff/write';

const ROOT = path.resolve(__dirname, '..');
const PERTURB_ENV = 'KVQUAL_PERTURB';

interface Options {
  features: string;
  requirements: string;
  out: string;
  campaign: string | null;
  coverage: boolean;
  args: string[];
}

function parseOptions(argv: string[]): Options {
  const options: Options = { features: 'features', requirements: 'requirements.yaml', out: 'reports', campaign: null, coverage: true, args: argv };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--features') options.features = value();
    else if (arg === '--requirements') options.requirements = value();
    else if (arg === '--out') options.out = value();
    else if (arg === '--campaign') options.campaign = value();
    else if (arg === '--no-coverage') options.coverage = false;
    else throw new Error(`unknown option ${arg} (use --features, --requirements, --out, --campaign, --no-coverage)`);
  }
  return options;
}

/** A path as given by the user, relative to the repository root for the tools run there. */
function fromRoot(p: string): string {
  return path.relative(ROOT, path.resolve(p)).split(path.sep).join('/') || '.';
}

function banner(text: string): void {
  process.stdout.write(`\n── ${text} ──\n`);
}

function tool(name: string): string {
  return path.join(ROOT, 'node_modules', '.bin', name);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, quiet = false): { status: number | null; output: string } {
  const result = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', stdio: quiet ? 'pipe' : 'inherit', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

function git(args: string[]): string | null {
  const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

function subject(): Subject {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const commit = git(['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(['status', '--porcelain']);
  const changed = status === null ? 0 : status.split('\n').filter(Boolean).length;
  return {
    packageName: pkg.name,
    packageVersion: pkg.version,
    commit: commit ?? 'unknown (not a git checkout)',
    worktree: commit === null ? 'no git information' : changed === 0 ? 'clean working tree' : `working tree differs from the commit in ${changed} file(s)`,
    node: process.version,
  };
}

function readRun(file: string): { run: RunModel | null; problem: string | null } {
  if (!fs.existsSync(file)) return { run: null, problem: `cucumber wrote no message stream (${path.basename(file)})` };
  return { run: parseRun(fs.readFileSync(file, 'utf8')), problem: null };
}

/** Coverage of src/: tsc to build/, then the unit tests and the feature suite from the JavaScript, under c8. */
function measureCoverage(features: string, env: NodeJS.ProcessEnv): { summary: CoverageSummary | null; note: string } {
  const build = path.join(ROOT, 'build');
  const raw = path.join(build, '.v8-coverage');
  fs.rmSync(build, { recursive: true, force: true });
  const compiled = run(tool('tsc'), ['-p', 'tsconfig.json', '--outDir', 'build'], env, true);
  if (!fs.existsSync(path.join(build, 'src'))) return { summary: null, note: `tsc produced no JavaScript: ${compiled.output.slice(0, 500)}` };
  const covEnv: NodeJS.ProcessEnv = { ...env, NODE_V8_COVERAGE: raw };
  delete covEnv[PERTURB_ENV];
  const unitDir = path.join(build, 'test', 'unit');
  const units = fs.existsSync(unitDir) ? fs.readdirSync(unitDir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join('build', 'test', 'unit', f)) : [];
  const unit = units.length ? run(process.execPath, ['--test', '--test-reporter=dot', ...units], covEnv, true) : { status: 0, output: '' };
  const suite = run(tool('cucumber-js'), ['--profile', 'compiled', `${features}/**/*.feature`, '--format', 'summary'], covEnv, true);
  const report = run(
    tool('c8'),
    ['report', '--temp-directory', raw, '--reporter', 'json-summary', '--report-dir', path.join(build, 'coverage'), '--include', 'build/src/**', '--all', '--src', 'build/src'],
    env,
    true,
  );
  const file = path.join(build, 'coverage', 'coverage-summary.json');
  if (report.status !== 0 || !fs.existsSync(file)) return { summary: null, note: `c8 could not report: ${report.output.slice(0, 500)}` };
  const caveats = [
    compiled.status !== 0 ? 'tsc reported type errors' : '',
    unit.status !== 0 ? 'some unit tests failed in the compiled run' : '',
    suite.status !== 0 ? 'some scenarios failed in the compiled run' : '',
  ].filter(Boolean);
  const scope =
    `Measured by c8 ${c8Version()} on the JavaScript that tsc compiled from src/ (mapped back to the TypeScript sources), while running ` +
    `${units.length} unit test file(s) of test/unit and the ${features}/ feature suite once more (cucumber profile "compiled"). ` +
    'Every file of src/ counts, loaded or not. Browser and integration tests are not included.' +
    (caveats.length ? ` Caveat: ${caveats.join('; ')}.` : '');
  const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { summary: summariseCoverage(summary, ROOT, scope), note: '' };
}

function c8Version(): string {
  return (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'c8', 'package.json'), 'utf8')) as { version: string }).version;
}

function utcDate(): string {
  return `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

async function main(argv: string[]): Promise<number> {
  const started = Date.now();
  const options = parseOptions(argv);
  const out = path.resolve(options.out);
  const features = fromRoot(options.features);
  const isDefault = features === 'features' && fromRoot(options.out) === 'reports';
  fs.mkdirSync(out, { recursive: true });
  // An old verdict must never sit beside new cucumber reports: remove it before anything runs.
  for (const name of ['signoff.md', 'signoff.html', ASSETS_DIR]) fs.rmSync(path.join(out, name), { recursive: true, force: true });

  const registry = parseRegistry(fs.readFileSync(path.resolve(options.requirements), 'utf8'), options.requirements);
  const perturbation = process.env[PERTURB_ENV] ? process.env[PERTURB_ENV]! : null;
  const firstEnv = { ...process.env };
  delete firstEnv[PERTURB_ENV];
  const secondEnv = { ...process.env };
  const glob = `${features}/**/*.feature`;

  banner('run 1 of 2: the suite, with cucumber.html, junit.xml and messages.ndjson');
  const messages = path.join(out, 'messages.ndjson');
  fs.rmSync(messages, { force: true });
  const formats = ['html:cucumber.html', 'junit:junit.xml', 'message:messages.ndjson'].flatMap((f) => {
    const [kind, file] = f.split(':');
    return ['--format', `${kind}:${fromRoot(path.join(out, file))}`];
  });
  run(tool('cucumber-js'), isDefault ? ['--profile', 'qualify'] : ['--profile', 'replay', glob, ...formats], firstEnv);

  banner(`run 2 of 2: the same suite again, to compare digests${perturbation ? ` (${PERTURB_ENV}="${perturbation}": test double active)` : ''}`);
  const rerunFile = path.join(out, RERUN_MESSAGES);
  fs.rmSync(rerunFile, { force: true });
  run(tool('cucumber-js'), ['--profile', 'replay', glob, '--format', `message:${fromRoot(rerunFile)}`], secondEnv);

  let coverage: CoverageSummary | null = null;
  let coverageNote = 'not requested (--no-coverage)';
  if (options.coverage) {
    banner('coverage of src/ (c8 over the compiled JavaScript)');
    const measured = measureCoverage(features, firstEnv);
    coverage = measured.summary;
    coverageNote = measured.note;
    process.stdout.write(coverage ? `lines ${coverage.lines.pct}%, branches ${coverage.branches.pct}%\n` : `not measured: ${coverageNote}\n`);
  }

  const first = readRun(messages);
  const second = readRun(rerunFile);
  const runModel = first.run ?? { scenarios: [], sources: [], cucumberVersion: null, runErrors: [first.problem!], finished: false };
  const determinism = compareRuns(runModel, second.run, second.problem);

  const figures = new Map<string, string>();
  for (const scenario of runModel.scenarios) {
    if (!scenario.evidence) continue;
    const svg = await renderFigure(scenario.evidence, anchorOf(scenario));
    if (svg !== null) figures.set(scenario.key, svg);
  }
  const command = ['npm run qualify', ...(argv.length ? ['--', ...argv] : [])].join(' ');
  const model = buildSignoff({
    campaign: options.campaign ?? `${subject().packageName} ${subject().packageVersion} release qualification`,
    date: utcDate(),
    subject: subject(),
    command,
    run: runModel,
    determinism,
    registry,
    coverage,
    coverageNote,
    perturbation,
    figures,
    companions: [
      { label: "cucumber's HTML report", file: 'cucumber.html' },
      { label: 'JUnit XML', file: 'junit.xml' },
      { label: 'message stream', file: 'messages.ndjson' },
      { label: 'message stream of the second run', file: RERUN_MESSAGES },
    ],
  });
  // Everything is rendered in memory first; only then are the files swapped in.
  const markdown = renderMarkdown(model);
  const html = renderHtml(model);
  const assets = model.views.filter((v) => v.figure !== null).map((v) => ({ name: v.figureFile!, content: v.figure! }));
  replaceDirAtomic(path.join(out, ASSETS_DIR), assets);
  writeFileAtomic(path.join(out, 'signoff.html'), html);
  writeFileAtomic(path.join(out, 'signoff.md'), markdown);

  banner(`verdict: ${model.verdict}`);
  for (const gate of model.gates) process.stdout.write(`${gate.passed ? 'pass' : 'FAIL'}  ${gate.title}: ${gate.summary}\n`);
  process.stdout.write(`\nsign-off: ${path.join(options.out, 'signoff.md')} and ${path.join(options.out, 'signoff.html')} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  return model.qualified ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`qualify could not complete: ${error.stack ?? error.message}\n`);
    process.exit(2);
  },
);
