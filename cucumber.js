// Cucumber profiles. `default` runs TypeScript through tsx (fast start); `ts-node` is the same
// suite through ts-node for users who run it that way; `qualify` also writes the reports.
// Runs are serial and never retried: a flaky scenario is a bug.
const common = {
  paths: ['features/**/*.feature'],
  require: ['steps/**/*.ts'],
  strict: true,
  retry: 0,
  parallel: 0,
  format: ['progress'],
  formatOptions: { snippetInterface: 'synchronous' },
};

module.exports = {
  default: { ...common, requireModule: ['tsx/cjs'] },
  'ts-node': { ...common, requireModule: ['ts-node/register/transpile-only'] },
  qualify: {
    ...common,
    requireModule: ['tsx/cjs'],
    format: ['progress', 'html:reports/cucumber.html', 'junit:reports/junit.xml', 'message:reports/messages.ndjson'],
  },
};
