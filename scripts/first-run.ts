// Run 1 of `npm run qualify` and then its planted-fault check, in one process: the longest chain of
// qualify's phases pays one Node start and one load of cucumber, tsx, steps/ and src/ instead of
// two (src/signoff/suiteRunner.ts). Run 1 is made through cucumber's API with the arguments its
// command line would get (parsed by cucumber's own parser: profile, paths, shard, report formats),
// its progress and summary line printed on standard output as cucumber-js prints them; then the
// line FIRST_RUN_ENDED; then, when run 1 wrote its message stream, the scenarios that passed there (read
// from the envelopes cucumber emitted, which that stream holds) run again under each planted simulator fault (the check of scripts/fault-check.ts, quiet), the result
// written to FAULTS_JSON. The exit status is run 1's, as cucumber's command line gives it: 0 when
// the run succeeded, 1 when not (or when cucumber could not run; its error is printed).
//
//   node --require tsx/cjs scripts/first-run.ts FAULTS_JSON CUCUMBER_ARGUMENT…
import fs from 'node:fs';
import path from 'node:path';
import ArgvParser from '@cucumber/cucumber/lib/configuration/argv_parser';
import { FIRST_RUN_ENDED } from '../src/signoff/suiteRunner';
import { parseEnvelopes } from '../src/signoff/messages';
import { faultCheckSettled, runWithOptions } from './suiteInProcess';

const ROOT = path.resolve(__dirname, '..');

/** The message stream a run writes (its `message:FILE` format), or null. */
function messageStream(formats: readonly (string | [string, string?])[] | undefined): string | null {
  for (const format of formats ?? []) {
    const [type, file] = typeof format === 'string' ? [format.slice(0, format.indexOf(':')), format.slice(format.indexOf(':') + 1)] : format;
    if (type === 'message' && file) return path.resolve(ROOT, file);
  }
  return null;
}

async function main(argv: string[]): Promise<number> {
  const [out, ...cucumberArgs] = argv;
  if (out === undefined || cucumberArgs.length === 0) throw new Error('usage: first-run.ts FAULTS_JSON CUCUMBER_ARGUMENT…');
  const { options, configuration } = ArgvParser.parse([process.argv[0], 'cucumber-js', ...cucumberArgs]);
  // What passed is read from the envelopes cucumber emitted as run 1 went, which its message stream holds too (not parsed a second time).
  const envelopes: object[] = [];
  const first = await runWithOptions(ROOT, { profiles: options.profile, provided: configuration }, process.env, (envelope) => envelopes.push(envelope));
  process.stdout.write(`${first.output}${FIRST_RUN_ENDED}\n`);
  const stream = messageStream(configuration.format);
  if (stream !== null && fs.existsSync(stream)) {
    const run = parseEnvelopes(envelopes);
    envelopes.length = 0;
    const check = await faultCheckSettled(ROOT, process.env, () => run);
    fs.writeFileSync(out, `${JSON.stringify(check)}\n`);
  }
  return first.status;
}

main(process.argv.slice(2)).then(
  (status) => (process.exitCode = status),
  (error: unknown) => {
    process.stderr.write(`first-run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 2;
  },
);
