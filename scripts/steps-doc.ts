// Generates docs/steps.md, the step catalogue a scenario's author writes from: how to write a
// scenario (a skeleton per level, tags and requirements, what a Then needs), then every step by
// domain (the cluster, requests, KV events and lag, routing outcomes, engine outcomes, …) as a
// sentence with its placeholders in words, its level, what it does or checks, and one real example
// from features/. The domain, level and description come from each step's definition
// (steps/support/catalogue.ts); a step without them fails the generator, as does a heading that
// would be a regular expression. Fuzzer-only steps and steps no feature uses are in an appendix.
// `--check` fails (exit 1) when docs/steps.md is not what this would write (`npm test` runs it);
// without it, the file is written.
//
//   node --require tsx/cjs scripts/steps-doc.ts [--check] [--file PATH]      (npm run docs:steps)
import fs from 'node:fs';
import path from 'node:path';
import { loadConfiguration, loadSupport, type ISupportCodeLibrary } from '@cucumber/cucumber/api';
import { AstBuilder, compile, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin';
import { IdGenerator } from '@cucumber/messages';
import { featureFiles } from './lint-requirements';
import { RANK_PROFILES } from '../steps/support/profiles';
import { EngineScenario } from '../steps/support/engineScenario';
import { DOMAINS, LEVEL_NAMES, stepInfoOf, type Domain, type StepInfo } from '../steps/support/catalogue';
import { TYPE_PLACEHOLDERS, wordsOf } from '../steps/support/phraseWords';
import { DEFAULT_ROUTER_SETTINGS } from '../src/router/router';

export { wordsOf };

const ROOT = path.resolve(__dirname, '..');
const OUTPUT = path.join(ROOT, 'docs', 'steps.md');

/** What each parameter type accepts (a type missing here fails the generator). */
const ACCEPTS: Record<string, string> = {
  duration: 'a time with its unit: `ns`, `us` (or `µs`), `ms` or `s`, decimals exact (`14.999 ms`, `2.5 ms`, `1 s`)',
  count: 'a whole number, in digits or as a word (`one`, `two`, `three`, `four`, `five`, `six`, `eight`, `sixteen`); thousands may be grouped (`13,890`)',
  tokens: 'a number of tokens, written `9-token` or `16 tokens` (`1 token`)',
  blocks: 'a number of KV blocks: `4 blocks`, `1 block`',
  bandwidth: 'a bandwidth in gigabytes per second: `1 GB/s`, `12.5 GB/s`',
  tier: 'a cache tier: `GPU memory` (also `G1`, `Device`) or `host memory` (also `G2`, `HostPinned`)',
  weight: 'a decimal number (`0.75`, `1.0`)',
  int: 'a whole number in digits (`4`, `-1`)',
  float: 'a decimal number (`0.5`)',
  word: 'one word without spaces',
  string: 'text in double quotes (`"system prompt"`)',
  '': 'free text up to the end of the phrase (see the values each step lists)',
};

interface Use {
  /** The scenario (pickle) it is a step of: its steps, in order, are the uses with this id. */
  scenario: string;
  uri: string;
  line: number;
  keyword: string;
  text: string;
  table: string[][] | null;
  docString: string | null;
}

/** One step definition as the catalogue shows it. */
export interface Entry {
  keyword: string;
  pattern: string;
  uri: string;
  line: number;
  info: StepInfo;
  /** The phrase with its placeholders in words. */
  words: string;
  /** The features' uses of it, in file order. */
  uses: Use[];
  /** The values a use gives its parameters, or null when the text is not this step. */
  matches(text: string): { value: string | null; type: string }[] | null;
  /** The arguments cucumber would pass the step's code for this text (parameter types applied), or null. */
  argumentsFor(text: string, world: unknown): unknown[] | null;
  /** The step's code as cucumber runs it (wrapped). */
  code: (...args: unknown[]) => unknown;
}

/** The parts of cucumber's loaded support code library this reads. */
interface LoadedSupport {
  stepDefinitions: {
    keyword: string;
    pattern: string | RegExp;
    uri: string;
    line: number;
    code: (...args: unknown[]) => unknown;
    unwrappedCode?: unknown;
    expression: { match(text: string): { group: { value?: string }; parameterType: { name?: string }; getValue(world: unknown): unknown }[] | null };
  }[];
  parameterTypeRegistry: { parameterTypes: Iterable<{ name?: string }> };
  World: new (options: unknown) => unknown;
}

export interface Catalogue {
  entries: Entry[];
  parameterTypes: string[];
  /** The World constructor the steps set (a fresh scenario's state). */
  World: new (options: unknown) => unknown;
  /** The loaded steps as cucumber's API takes them (a run in this process: runCucumber's `support`). */
  support: ISupportCodeLibrary;
}

/** Loads the step definitions (once per process: cucumber requires them) and the features' uses of each. */
export async function loadCatalogue(): Promise<Catalogue> {
  const { runConfiguration } = await loadConfiguration({ provided: { paths: [] } }, { cwd: ROOT });
  const support = (await loadSupport(runConfiguration, { cwd: ROOT })) as unknown as LoadedSupport;
  requireInfo(support.stepDefinitions.map((sd) => ({ place: `${sd.uri.split(path.sep).join('/')}:${sd.line}`, pattern: String(sd.pattern), info: stepInfoOf(sd.unwrappedCode ?? sd.code) })));
  const entries: Entry[] = support.stepDefinitions.map((sd) => {
    const uri = sd.uri.split(path.sep).join('/');
    const info = stepInfoOf(sd.unwrappedCode ?? sd.code)!;
    const pattern = typeof sd.pattern === 'string' ? sd.pattern : sd.pattern.source;
    return {
      keyword: sd.keyword,
      pattern,
      uri,
      line: sd.line,
      info,
      words: info.words ?? wordsOf(pattern),
      uses: [],
      matches: (text: string) => {
        const args = sd.expression.match(text);
        return args === null ? null : args.map((arg) => ({ value: arg.group.value ?? null, type: arg.parameterType.name ?? '' }));
      },
      argumentsFor: (text: string, world: unknown) => sd.expression.match(text)?.map((arg) => arg.getValue(world)) ?? null,
      code: sd.code,
    };
  });
  for (const use of uses()) entries.find((entry) => entry.matches(use.text) !== null)?.uses.push(use);
  const builtin = new Set(['int', 'float', 'word', 'string', '', 'double', 'bigdecimal', 'byte', 'short', 'long', 'biginteger']);
  const parameterTypes = [...support.parameterTypeRegistry.parameterTypes].map((p) => p.name ?? '').filter((name) => !builtin.has(name));
  return { entries, parameterTypes, World: support.World, support: support as unknown as ISupportCodeLibrary };
}

/** Fails on a step defined without its catalogue info, or with an empty description: the catalogue would not be true. */
export function requireInfo(definitions: { place: string; pattern: string; info: StepInfo | null }[]): void {
  const missing = definitions.filter((d) => d.info === null || d.info.says.trim() === '').map((d) => `${d.place} ${d.pattern}`);
  if (missing.length === 0) return;
  throw new Error(`steps without catalogue info (define them with Given/When/Then from steps/support/catalogue.ts, giving domain, level and says):\n  ${missing.join('\n  ')}`);
}

type GherkinStep = { id: string; keyword: string; location: { line: number } };
type GherkinChild = { background?: { steps: readonly GherkinStep[] }; scenario?: { steps: readonly GherkinStep[] }; rule?: { children: readonly unknown[] } };

function uses(): Use[] {
  const out: Use[] = [];
  for (const uri of featureFiles(path.join(ROOT, 'features'), ROOT)) {
    const newId = IdGenerator.incrementing();
    const document = new Parser(new AstBuilder(newId), new GherkinClassicTokenMatcher()).parse(fs.readFileSync(path.join(ROOT, uri), 'utf8'));
    const keywords = new Map<string, { keyword: string; line: number }>();
    const walk = (children: readonly GherkinChild[]) => {
      for (const child of children) {
        for (const step of [...(child.background?.steps ?? []), ...(child.scenario?.steps ?? [])]) keywords.set(step.id, { keyword: step.keyword.trim(), line: step.location.line });
        if (child.rule) walk(child.rule.children as readonly GherkinChild[]);
      }
    };
    walk((document.feature?.children ?? []) as readonly GherkinChild[]);
    for (const pickle of compile({ ...document, uri }, uri, newId)) {
      for (const step of pickle.steps) {
        const at = keywords.get(step.astNodeIds[0]) ?? { keyword: '', line: 0 };
        const table = step.argument?.dataTable?.rows.map((row) => row.cells.map((cell) => cell.value)) ?? null;
        out.push({ scenario: `${uri} ${pickle.id}`, uri, line: at.line, keyword: at.keyword, text: step.text, table, docString: step.argument?.docString?.content ?? null });
      }
    }
  }
  return out;
}

/** How a scenario of each level is written: the shape to copy (the catalogue's test runs both and they pass). */
export const SKELETONS = {
  router: [
    '@AISIM-1893 @LAG-1',
    'Feature: A G2 store steers placement only once the router can see it',
    '',
    '  Why the rule exists, in two or three sentences a reviewer who does not code can follow.',
    '',
    '  Scenario: a request arriving after the lag goes to the worker that holds its prefix in G2',
    '    Given a cluster of 2 aggregated workers with 4-token blocks',
    '    And the prefix "system prompt" is 16 tokens long',
    '    And KV events reach the router 5 ms after they are emitted',
    '    And worker 1 finishes storing "system prompt" in host memory at 10 ms',
    '    When a request starting with "system prompt" arrives at 15 ms',
    '    Then it is placed on worker 1, which holds it in G2',
  ],
  engine: [
    '@AISIM-1893 @G2-6',
    'Feature: A resumed conversation goes where its prefix is',
    '',
    '  Why the rule exists, in two or three sentences a reviewer who does not code can follow.',
    '',
    '  Scenario: with G2 events visible, the resume moves to the private G2 owner and restores 8 tokens',
    '    Given a cluster of 2 aggregated workers with the reference rank profile',
    '    And each worker has private host memory of 16 blocks',
    '    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens',
    '    And worker 0 serves a 31-token request with 1 output token at 5 ms',
    '    And worker 0 serves a 4-token request with 8 output tokens at 19 ms',
    '    When conversation "A" resumes at 20 ms with 4 more tokens',
    '    Then the resume is placed on worker 0, which holds its prefix in G2',
    '    And it restores 8 tokens from G2',
  ],
} as const;

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|');

function tableBlock(table: string[][], limit = 6): string[] {
  const rows = table.slice(0, limit);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)));
  const lines = rows.map((row) => `      | ${row.map((value, c) => value.padEnd(widths[c])).join(' | ')} |`);
  if (table.length > limit) lines.push(`      … (${table.length - limit} more rows)`);
  return lines;
}

const KEYWORD_ORDER = ['Given', 'When', 'Then'];

/** A heading must read as words: no regular-expression syntax. */
function checkedHeading(heading: string, entry: Entry): string {
  if (/\^|\$\s*$|\(\?|\\[dsSw]|\[[^\]]*\]\+|\.\+|\.\*/.test(heading)) throw new Error(`${entry.uri}:${entry.line}: the heading "${heading}" reads as a regular expression: give the step its words (info.words)`);
  return heading;
}

function entryLines(entry: Entry): string[] {
  const lines = [checkedHeading(`#### ${entry.keyword} ${entry.words}`, entry), '', `*${LEVEL_NAMES[entry.info.level]}* — ${entry.info.says}`, ''];
  const free = entry.uses.length > 0 ? (entry.matches(entry.uses[0].text) ?? []).map((arg, i) => ({ i, type: arg.type })).filter((arg) => arg.type === '' || arg.type === 'word' || arg.type === 'string') : [];
  for (const { i } of free) {
    const values = [...new Set(entry.uses.map((use) => entry.matches(use.text)?.[i]?.value).filter((v): v is string => typeof v === 'string'))];
    if (values.length > 1) lines.push(`Values the features use (${ordinal(i + 1)} placeholder): ${values.slice(0, 8).map((v) => code(cell(v))).join(', ')}${values.length > 8 ? ` and ${values.length - 8} more` : ''}.`, '');
  }
  if (entry.uses.length === 0) return [...lines, 'No feature uses it yet.', ''];
  const use = entry.uses[0];
  const places = new Set(entry.uses.map((u) => `${u.uri}:${u.line}`)).size;
  return [
    ...lines,
    `Example (${code(`${use.uri}:${use.line}`)}${places > 1 ? `, one of ${places} uses` : ''}):`,
    '',
    '```gherkin',
    `    ${use.keyword} ${use.text}`,
    ...(use.table ? tableBlock(use.table) : []),
    ...(use.docString !== null ? ['      """', '      …', '      """'] : []),
    '```',
    '',
  ];
}

function ordinal(n: number): string {
  return ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'][n - 1] ?? `${n}th`;
}

function sortedEntries(entries: Entry[]): Entry[] {
  // Within a keyword, the most used first: the steps a new scenario most likely needs.
  return [...entries].sort((a, b) => KEYWORD_ORDER.indexOf(a.keyword) - KEYWORD_ORDER.indexOf(b.keyword) || b.uses.length - a.uses.length || a.uri.localeCompare(b.uri) || a.line - b.line);
}

function guide(): string[] {
  return [
    '## Writing a scenario',
    '',
    'A scenario is a claim a reviewer who does not code can check: its title states the claim, its `Given` steps describe the',
    'cluster and what happened before, one `When` makes it happen, and its `Then` steps prove the claim with exact numbers. Find the',
    'steps below by what they are about, copy their example, and change the values. Run the new file alone with',
    '`npx cucumber-js --profile replay features/<folder>/<file>.feature` (add `:<line>` to run one scenario).',
    '',
    '### Two levels',
    '',
    '- **Router-level**: the router and its view of the cluster alone, no engine runs. You write the KV events each worker sends',
    '  (`worker 1 finishes storing "system prompt" in host memory at 10 ms`) and when requests arrive, and check where the router',
    '  placed them and why. Begins with `Given a cluster of 2 aggregated workers with 4-token blocks`.',
    '- **Engine-level**: a cluster described by a settings table or a rank profile, whose engines run requests and decide what is',
    '  cached and when events are sent; you check what the run did (reuse, waits, times, events). Begins with',
    '  `Given a cluster of 2 aggregated workers with these settings:` (or `… with the reference rank profile`).',
    '- A scenario uses one level; steps marked *either level* fit both (and some need no cluster at all: blocks, configs, documents).',
    '  A step of the other level fails with a sentence saying so and how its level begins. `Given` steps may come in any order:',
    '  they are applied when the `When` runs.',
    '',
    '### A router-level skeleton',
    '',
    '```gherkin',
    ...SKELETONS.router,
    '```',
    '',
    '### An engine-level skeleton',
    '',
    '```gherkin',
    ...SKELETONS.engine,
    '```',
    '',
    '### Tags and requirements',
    '',
    '- Every scenario carries at least one requirement tag, on itself, its Rule, its Examples or its Feature: a tracked ticket',
    '  (`@AISIM-1893`) or a rule id of the semantics (`@LAG-1`, `@G2-6`, `@SCORE-2`).',
    '- Every tag that looks like a requirement id must be listed in `requirements.yaml` (id, title, source, owner); a rule id is',
    '  listed there once a scenario is tagged with it. Add the entry when you tag a new rule.',
    '- `npm test` runs the lint (`scripts/lint-requirements.ts`): it fails on a scenario without a requirement tag, a tag naming no',
    '  listed requirement, and a listed requirement no scenario covers. The sign-off prints the registry as its traceability matrix.',
    '',
    '### What a Then needs',
    '',
    '- A scenario ends with its `Then` steps (`And`/`But` after a `Then` are Thens too): a scenario without one, or with a `Given`,',
    '  `When` or `*` step after its last `Then`, fails before it runs, because nothing would check what it did.',
    '- Every `Then` asserts: a `Then` that checks nothing fails.',
    '- Numbers are exact. `its time to first token is 9 ms` fails at 9.001 ms; counts (`restores 8 tokens`, `2 of the 4 requests`)',
    '  must match exactly. Times are integer nanoseconds inside, so `14.999 ms` is exact too.',
    '- Ties fail a claim "by load": `it is placed on worker 0, the less loaded worker` (and the other "less loaded" steps) passes only',
    '  when that worker carried strictly less load than every other; with equal load the seeded tie-break decided, so give the',
    '  other workers more load first (`Given worker 1 is already serving a 4-token request`). To claim a tie, use',
    '  `the first request was a 2-way tie broken by a seeded draw`.',
    '- `Then it …` and `Then the resume …` talk about the request the `When` sent: send it with a `When` of the same level.',
    '- One behaviour per scenario and one `When`; a Scenario Outline for boundaries (before, at, after an instant).',
    '',
  ];
}

export async function generate(catalogue?: Catalogue): Promise<string> {
  const { entries, parameterTypes } = catalogue ?? (await loadCatalogue());
  const missing = parameterTypes.filter((name) => !(name in ACCEPTS) || !(name in TYPE_PLACEHOLDERS));
  if (missing.length > 0) throw new Error(`scripts/steps-doc.ts: describe the parameter type(s) ${missing.map((m) => `{${m}}`).join(', ')} in ACCEPTS (here) and TYPE_PLACEHOLDERS (steps/support/phraseWords.ts)`);
  const all = entries.flatMap((entry) => entry.uses);
  const settings = new EngineScenario({ workers: 0, dp_size: 1, block_size: 16, lag_ns: 0, router: { ...DEFAULT_ROUTER_SETTINGS } }).settingNames();
  const settingValues = new Map<string, Set<string>>(settings.map((name) => [name, new Set<string>()]));
  for (const use of all) {
    if (!/these settings:$/.test(use.text) || !use.table) continue;
    for (const [name, value] of use.table) settingValues.get(name.trim())?.add(value.trim());
  }
  const main = entries.filter((entry) => entry.info.domain !== 'fuzzer' && entry.uses.length > 0);
  const unused = entries.filter((entry) => entry.info.domain !== 'fuzzer' && entry.uses.length === 0);
  const fuzzer = entries.filter((entry) => entry.info.domain === 'fuzzer');
  const domains = (Object.keys(DOMAINS) as Domain[]).filter((domain) => main.some((entry) => entry.info.domain === domain));
  const anchor = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');

  const out: string[] = [
    '# Step catalogue',
    '',
    '<!-- Generated by `npm run docs:steps` (scripts/steps-doc.ts) from steps/ and features/. Do not edit: `npm test` fails when this file is stale. -->',
    '',
    'The steps a scenario is written with, by what they are about, each as a sentence with its placeholders in `<angle brackets>`,',
    'its level, what it does or checks, and a real example from `features/`. The domain words (G1, G2, H2D, dp rank, lane, play, …)',
    'are defined in [the glossary](glossary.md). A step that matches no phrase fails with the nearest phrases (those of the',
    "scenario's level first).",
    '',
    '- [Writing a scenario](#writing-a-scenario): the two levels, a skeleton of each, tags and requirements, what a Then needs',
    '- [Placeholders](#placeholders), [the cluster settings table](#cluster-settings-table), [rank profiles](#rank-profiles)',
    ...domains.map((domain) => `- [${DOMAINS[domain]}](#${anchor(DOMAINS[domain])})`),
    '- [Appendix: generated cases and unused steps](#appendix-generated-cases-and-unused-steps)',
    '',
    ...guide(),
    '## Placeholders',
    '',
    '| placeholder | accepts |',
    '|---|---|',
    ...Object.entries(ACCEPTS)
      .filter(([name]) => ['', 'int', 'float', 'word', 'string'].includes(name) || parameterTypes.includes(name))
      .map(([name, accepts]) => `| ${code(name === 'tokens' ? '<n>-token, <n> tokens' : TYPE_PLACEHOLDERS[name])} | ${cell(accepts)} |`),
    '',
    'Named placeholders (`<worker>`, `<dp rank>`, `<request id>`, `"<prefix>"`, `"<conversation>"`, …) are numbers, words or quoted',
    'text as above, named by what they stand for. In a phrase, `(s)` marks optional text (`worker(s)` reads `worker` or `workers`).',
    '',
    '## Cluster settings table',
    '',
    'The rows a `… with these settings:` table accepts (setting name, then its value), with the values the features give them:',
    '',
    '| setting | values used in the features |',
    '|---|---|',
    ...settings.map((name) => `| ${cell(name)} | ${[...settingValues.get(name)!].map((v) => code(cell(v))).join(', ') || '(not used yet)'} |`),
    '',
    '## Rank profiles',
    '',
    'A named set of settings-table rows (`a cluster of 2 aggregated workers with the reference rank profile`, optionally',
    '`… and these settings:` for the rows that differ), so the table is not copied into every feature (`steps/support/profiles.ts`):',
    '',
    ...Object.entries(RANK_PROFILES).flatMap(([name, rows]) => [`### ${name}`, '', '| setting | value |', '|---|---|', ...rows.map(([setting, value]) => `| ${cell(setting)} | ${code(cell(value))} |`), '']),
  ];
  for (const domain of domains) {
    out.push(`## ${DOMAINS[domain]}`, '');
    for (const entry of sortedEntries(main.filter((e) => e.info.domain === domain))) out.push(...entryLines(entry));
  }
  out.push('## Appendix: generated cases and unused steps', '');
  out.push('### Generated cases (fuzzer only)', '', 'The steps of the scenarios `npm run fuzz` writes under `reports/fuzz/` for a counterexample it found; not for hand-written scenarios.', '');
  for (const entry of sortedEntries(fuzzer)) out.push(`- ${code(`${entry.keyword} ${entry.words}`)}: ${entry.info.says}`);
  out.push('');
  if (unused.length > 0) {
    out.push('### Steps no feature uses yet', '');
    for (const entry of sortedEntries(unused)) out.push(...entryLines(entry).map((line) => line.replace(/^#### /, '#### ')));
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

/** What `--check` prints when the file (`shown`) is not the generated text, or null when it is. */
export function staleness(current: string, generated: string, shown: string): string | null {
  if (current === generated) return null;
  return `${shown} is stale: the step definitions or the features changed. Run \`npm run docs:steps\` and commit the result.\n`;
}

async function main(argv: string[]): Promise<number> {
  const text = await generate();
  const at = argv.indexOf('--file');
  const file = at >= 0 && argv[at + 1] ? path.resolve(argv[at + 1]) : OUTPUT;
  const shown = path.relative(ROOT, file).split(path.sep).join('/');
  if (argv.includes('--check')) {
    const stale = staleness(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', text, shown);
    if (stale === null) return 0;
    process.stdout.write(stale);
    return 1;
  }
  fs.writeFileSync(file, text);
  process.stdout.write(`wrote ${shown} (${text.split('\n').length} lines)\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`steps-doc: ${error.message}\n`);
      process.exit(2);
    },
  );
}
