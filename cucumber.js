// Cucumber profiles. `default` runs TypeScript through tsx (fast start); `ts-node` is the same
// suite through ts-node for users who run it that way. `npm run qualify` runs `replay` with the
// suite's glob and its report formats (it writes them into an unpublished run folder).
// `replay` runs only the paths given on the command line (cucumber adds command-line paths to a
// profile's paths, so a scenario's replay command `… --profile replay file:line` needs a profile
// without any); `compiled` is the same for the JavaScript the sign-off's coverage run compiles into build/.
// Runs are serial and never retried: a flaky scenario is a bug.
const suite = ['features/**/*.feature'];
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
  default: { ...common, paths: suite, requireModule: ['tsx/cjs'] },
  'ts-node': { ...common, paths: suite, requireModule: ['ts-node/register/transpile-only'] },
  replay: { ...common, requireModule: ['tsx/cjs'] },
  compiled: { ...common, require: ['build/steps/**/*.js'] },
};
