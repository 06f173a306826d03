// Requirement-tag lint (part of `npm test`): parses every feature with cucumber's own Gherkin
// parser and compiler (so Feature, Rule, Scenario and Examples tags are all inherited as cucumber
// inherits them) and checks the scenarios against requirements.yaml. Exits 1 on any error: a
// scenario without a requirement tag, a tag naming no known requirement, a requirement without a
// scenario, or a feature that does not parse. Paths are relative to the working directory:
//   node --require tsx/cjs scripts/lint-requirements.ts [--features DIR] [--requirements FILE]
import fs from 'node:fs';
import path from 'node:path';
import { AstBuilder, compile, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin';
import { IdGenerator } from '@cucumber/messages';
import { parseRegistry, traceRequirements, Traceability, TracedScenario } from '../src/signoff/requirements';
import { compareText } from '../src/order';

export interface LintResult {
  trace: Traceability | null;
  /** Problems that stop the check itself: unreadable registry, unparsable features. */
  problems: string[];
  ok: boolean;
}

/** Every `.feature` file under a directory, sorted, as paths relative to `root`. */
export function featureFiles(dir: string, root: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name))) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.feature')) out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(dir);
  return out;
}

/** The scenarios (pickles) of one feature's text, with inherited tags; throws on a parse error. */
export function scenariosOf(uri: string, text: string): TracedScenario[] {
  const newId = IdGenerator.incrementing();
  const parser = new Parser(new AstBuilder(newId), new GherkinClassicTokenMatcher());
  const document = parser.parse(text);
  return compile({ ...document, uri }, uri, newId).map((pickle) => ({
    name: pickle.name,
    uri,
    line: pickle.location?.line ?? 0,
    tags: pickle.tags.map((tag) => tag.name),
  }));
}

/** Lints the features of a directory against a registry file. */
export function lintRequirements(options: { root: string; features: string; requirements: string }): LintResult {
  const problems: string[] = [];
  let registry;
  try {
    registry = parseRegistry(fs.readFileSync(path.resolve(options.root, options.requirements), 'utf8'), options.requirements);
  } catch (error) {
    return { trace: null, problems: [(error as Error).message], ok: false };
  }
  const scenarios: TracedScenario[] = [];
  for (const uri of featureFiles(path.resolve(options.root, options.features), options.root)) {
    try {
      scenarios.push(...scenariosOf(uri, fs.readFileSync(path.resolve(options.root, uri), 'utf8')));
    } catch (error) {
      problems.push(`${uri}: does not parse: ${(error as Error).message}`);
    }
  }
  const trace = traceRequirements(registry, scenarios);
  return { trace, problems, ok: problems.length === 0 && trace.errors === 0 };
}

function main(argv: string[]): number {
  const option = (name: string, fallback: string) => {
    const at = argv.indexOf(name);
    return at >= 0 && argv[at + 1] ? argv[at + 1] : fallback;
  };
  const features = option('--features', 'features');
  const requirements = option('--requirements', 'requirements.yaml');
  const result = lintRequirements({ root: process.cwd(), features, requirements });
  for (const problem of result.problems) process.stdout.write(`error: ${problem}\n`);
  if (result.trace) {
    for (const finding of result.trace.findings) process.stdout.write(`${finding.severity}: ${finding.message}\n`);
    const scenarios = new Set(result.trace.rows.flatMap((row) => row.scenarios.map((s) => `${s.uri}:${s.line}`))).size;
    const covered = result.trace.rows.filter((row) => row.scenarios.length > 0).length;
    process.stdout.write(
      `requirement tags: ${result.trace.rows.length} requirements (${covered} covered), ${scenarios} traced scenarios, ` +
        `${result.trace.errors + result.problems.length} error(s), ${result.trace.warnings} warning(s)\n`,
    );
  }
  return result.ok ? 0 : 1;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
