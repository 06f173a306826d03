// `npm run mutation`: StrykerJS over src/router, src/engine, src/events and the sign-off's gates (the fuzz
// invariant checker, the verdict model, the determinism comparison, the message-stream reader, the
// shard checks and the readers of the coverage run and the requirement registry; stryker.config.json),
// killing mutants with the feature suite and the unit tests (scripts/mutation/
// features-and-units-runner.mjs), then prints the score and the surviving mutants worth a test.
// Writes reports/mutation/index.html (the browsable report) and mutation.json. Not part of
// `npm test` or CI: a full run takes tens of minutes (docs/development.md, "Mutation testing").
// This driver may read the clock (the wall time it reports); the library in src/ may not.
//
//   npm run mutation [-- --all] [Stryker options, e.g. --mutate 'src/events/**/*.ts' --incremental --concurrency 1]
//
// --all also lists the survivors that only change an error message's text. Exit status: Stryker's
// (0 when it ran), 2 when it could not run or wrote no report.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MutationReport, summarise } from './mutation/summary';

const ROOT = path.resolve(__dirname, '..');
const REPORT_DIR = path.join(ROOT, 'reports', 'mutation');
const JSON_REPORT = path.join(REPORT_DIR, 'mutation.json');
const HTML_REPORT = path.join(REPORT_DIR, 'index.html');

function main(argv: string[]): number {
  const all = argv.includes('--all');
  const strykerArgs = argv.filter((arg) => arg !== '--all');
  // An old report must never be read as the result of this run.
  fs.rmSync(JSON_REPORT, { force: true });
  fs.rmSync(HTML_REPORT, { force: true });
  const started = process.hrtime.bigint();
  const stryker = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'stryker'), ['run', ...strykerArgs], { cwd: ROOT, stdio: 'inherit' });
  const wall_s = Number(process.hrtime.bigint() - started) / 1e9;
  if (stryker.error) {
    console.error(`npm run mutation: could not start Stryker: ${stryker.error.message}`);
    return 2;
  }
  if (!fs.existsSync(JSON_REPORT)) {
    console.error(`npm run mutation: Stryker exited with status ${stryker.status} and wrote no ${path.relative(ROOT, JSON_REPORT)}`);
    return 2;
  }
  const report = JSON.parse(fs.readFileSync(JSON_REPORT, 'utf8')) as MutationReport;
  console.log(`\n── mutation testing summary ──\n${summarise(report, { all })}`);
  const minutes = Math.floor(wall_s / 60);
  console.log(`\nwall time ${minutes} min ${Math.round(wall_s - 60 * minutes)} s; report: ${path.relative(ROOT, HTML_REPORT)}`);
  return stryker.status ?? 2;
}

process.exitCode = main(process.argv.slice(2));
