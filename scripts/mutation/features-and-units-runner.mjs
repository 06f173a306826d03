// StrykerJS test runner for `npm run mutation`: one run, one report and one score in which a
// mutant is killed by the feature suite or by the unit tests. The feature suite runs first,
// in-process through @stryker-mutator/cucumber-runner (per-scenario coverage, steps loaded once
// through tsx); only a mutant it leaves alive then meets the unit tests, each test file run by
// @stryker-mutator/tap-runner in its own node process (per-file coverage). Each mutant only meets
// the scenarios and test files that execute its code.
import { commonTokens, declareFactoryPlugin, PluginKind } from '@stryker-mutator/api/plugin';
import { DryRunStatus, MutantRunStatus } from '@stryker-mutator/api/test-runner';
import { strykerPlugins as cucumberPlugins } from '@stryker-mutator/cucumber-runner';
import { strykerPlugins as tapPlugins } from '@stryker-mutator/tap-runner';

/** Cucumber names a scenario `features/x.feature:LINE`; the TAP runner names a test by its file. */
const isScenario = (testId) => /\.feature:\d+$/.test(testId);

class FeaturesAndUnitsRunner {
  constructor(scenarios, units) {
    this.scenarios = scenarios;
    this.units = units;
  }

  capabilities() {
    // The cucumber runner keeps the loaded modules between runs, so neither can reload them.
    return { reloadEnvironment: false };
  }

  async init() {
    await this.scenarios.init?.();
    await this.units.init?.();
  }

  async dispose() {
    await this.scenarios.dispose?.();
    await this.units.dispose?.();
  }

  async dryRun(options) {
    const testFiles = options.testFiles;
    const scenarios = await this.scenarios.dryRun({ ...options, testFiles: testFiles?.filter((f) => f.endsWith('.feature')) });
    if (scenarios.status !== DryRunStatus.Complete) return scenarios;
    const units = await this.units.dryRun({ ...options, testFiles: testFiles?.filter((f) => !f.endsWith('.feature')) });
    if (units.status !== DryRunStatus.Complete) return units;
    const coverage = scenarios.mutantCoverage && units.mutantCoverage && {
      static: { ...scenarios.mutantCoverage.static },
      perTest: { ...scenarios.mutantCoverage.perTest, ...units.mutantCoverage.perTest },
    };
    return { status: DryRunStatus.Complete, tests: [...scenarios.tests, ...units.tests], mutantCoverage: coverage };
  }

  async mutantRun(options) {
    const filter = options.testFilter;
    const scenarioIds = filter?.filter(isScenario);
    const unitIds = filter?.filter((id) => !isScenario(id));
    let first;
    if (!filter || scenarioIds.length > 0) {
      first = await this.scenarios.mutantRun({ ...options, testFilter: scenarioIds });
      const settled = first.status !== MutantRunStatus.Survived && !(options.disableBail && first.status === MutantRunStatus.Killed);
      if (settled) return first;
    }
    if (!filter || unitIds.length > 0) {
      const second = await this.units.mutantRun({ ...options, testFilter: unitIds });
      return first ? combine(first, second) : second;
    }
    return first ?? { status: MutantRunStatus.Survived, nrOfTests: 0 };
  }
}

/** The outcome of both halves: killed if either killed it (all killers kept when bail is off). */
function combine(first, second) {
  if (first.status === MutantRunStatus.Killed && second.status === MutantRunStatus.Killed) {
    return { ...first, killedBy: [...first.killedBy, ...second.killedBy], nrOfTests: first.nrOfTests + second.nrOfTests };
  }
  if (first.status === MutantRunStatus.Killed) return first;
  if (second.status === MutantRunStatus.Survived) return { status: MutantRunStatus.Survived, nrOfTests: first.nrOfTests + second.nrOfTests };
  return second;
}

function createFeaturesAndUnitsRunner(injector) {
  const scenarios = injector.injectFunction(cucumberPlugins[0].factory);
  const units = injector.injectFunction(tapPlugins[0].factory);
  return new FeaturesAndUnitsRunner(scenarios, units);
}
createFeaturesAndUnitsRunner.inject = [commonTokens.injector];

export const strykerPlugins = [declareFactoryPlugin(PluginKind.TestRunner, 'features-and-units', createFeaturesAndUnitsRunner)];
