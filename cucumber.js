// Cucumber profiles. `default` runs TypeScript through tsx (fast start); `ts-node` is the same
// suite through ts-node for users who run it that way. `npm run qualify` runs `replay` with the
// suite's glob and its report formats (it writes them into an unpublished run folder).
// Feature paths given on the command line replace the suite: `npx cucumber-js features/x.feature:12`
// runs that scenario alone (cucumber adds command-line paths to a profile's own, so `default` and
// `ts-node` have none of their own when the command line names any). `replay` never has any (a
// scenario's replay command is `… --profile replay file:line`); `compiled` is the same for the
// JavaScript the sign-off's coverage run compiles into build/.
// Runs are serial and never retried: a flaky scenario is a bug.
const path = require('node:path');

const suite = ['features/**/*.feature'];

/** Whether this process is cucumber's own command line and names feature paths (cucumber's parser reads them). */
function commandLineNamesPaths(argv = process.argv) {
  const script = argv[1] ?? '';
  const isCucumberCli = path.basename(script) === 'cucumber-js' || script.split(path.sep).slice(-3).join('/') === 'cucumber/bin/cucumber.js';
  if (!isCucumberCli) return false;
  const { default: ArgvParser } = require('@cucumber/cucumber/lib/configuration/argv_parser');
  try {
    return (ArgvParser.parse(argv).configuration.paths ?? []).length > 0;
  } catch {
    return false; // cucumber has parsed this command line already; whatever it refused, it reports
  }
}

const ownPaths = commandLineNamesPaths() ? [] : suite;
const common = {
  require: ['steps/**/*.ts'],
  strict: true,
  retry: 0,
  parallel: 0,
  format: ['progress'],
  // An undefined or misspelt step gets the three nearest phrases ("did you mean"), not a code snippet.
  formatOptions: { snippetInterface: 'synchronous', snippetSyntax: './steps/support/didYouMean.js' },
};

module.exports = {
  default: { ...common, paths: ownPaths, requireModule: ['tsx/cjs'] },
  'ts-node': { ...common, paths: ownPaths, requireModule: ['ts-node/register/transpile-only'] },
  replay: { ...common, requireModule: ['tsx/cjs'] },
  compiled: { ...common, require: ['build/steps/**/*.js'] },
};
