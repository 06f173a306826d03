// `npm run qualify` as one process: scripts/qualify.ts's qualifyWith on this process's arguments,
// streams and variables, with its suite runs and planted-fault check made in this process too
// (scripts/suiteInProcess.ts) rather than in processes of their own. For tests of what a process
// shows whatever makes its suite runs (a kill while it runs: test/support/qualify.ts's
// qualifyOneProcess), at the cost of one Node start and one load of the steps.
import { qualifyWith } from '../../scripts/qualify';
import { IN_PROCESS_SUITE_RUNNER } from '../../scripts/suiteInProcess';

// A copy of the variables: an in-process suite run sets process.env to its own while it lasts.
const env = { ...process.env };
void qualifyWith(process.argv.slice(2), { out: (text) => void process.stdout.write(text), err: (text) => void process.stderr.write(text), env, suiteRunner: IN_PROCESS_SUITE_RUNNER }).then((status) => {
  process.exitCode = status;
});
