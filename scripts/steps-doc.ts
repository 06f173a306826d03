// Generates docs/steps.md, the catalogue of step phrases a reviewer writes scenarios with, from
// the step definitions cucumber loads (steps/**/*.ts) and the features: every phrase with its
// parameters (what each accepts, with units), one real example from a feature, the values the
// features give free-text parameters, whether it is router-level or engine-level, and the settings
// a cluster settings table accepts. `--check` fails (exit 1) when docs/steps.md is not what this
// would write (`npm test` runs it); without it, the file is written.
//
//   node --require tsx/cjs scripts/steps-doc.ts [--check] [--file PATH]      (npm run docs:steps)
import fs from 'node:fs';
import path from 'node:path';
import { loadConfiguration, loadSupport } from '@cucumber/cucumber/api';
import { AstBuilder, compile, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin';
import { IdGenerator } from '@cucumber/messages';
import { featureFiles } from './lint-requirements';
import { RANK_PROFILES } from '../steps/support/profiles';
import { EngineScenario } from '../steps/support/engineScenario';
import { DEFAULT_ROUTER_SETTINGS } from '../src/router/router';

const ROOT = path.resolve(__dirname, '..');
const OUTPUT = path.join(ROOT, 'docs', 'steps.md');

/** What each parameter type accepts, in a reviewer's words (a type missing here fails the generator). */
const PARAMETER_TYPES: Record<string, string> = {
  duration: 'a time with its unit: `ns`, `us` (or `µs`), `ms` or `s`, decimals exact (`14.999 ms`, `2.5 ms`, `1 s`)',
  count: 'a whole number, in digits or as a word (`one`, `two`, `three`, `four`, `five`, `six`, `eight`, `sixteen`)',
  tokens: 'a number of tokens: `9-token`, `16 tokens`, `1 token`',
  blocks: 'a number of KV blocks: `4 blocks`, `1 block`',
  bandwidth: 'a bandwidth in gigabytes per second: `1 GB/s`, `12.5 GB/s`',
  tier: 'a cache tier: `GPU memory` (also `G1`, `Device`) or `host memory` (also `G2`, `HostPinned`)',
  weight: 'a decimal number (`0.75`, `1.0`)',
  int: 'a whole number in digits (`4`, `-1`)',
  float: 'a decimal number (`0.5`)',
  word: 'one word without spaces',
  string: 'text in double quotes (`"system prompt"`)',
  '': 'free text up to the end of the phrase (see the values the features use)',
};

interface Definition {
  keyword: string;
  pattern: string;
  uri: string;
  line: number;
  code: string;
  matches(text: string): { value: string | null; type: string }[] | null;
}

interface Use {
  uri: string;
  line: number;
  keyword: string;
  text: string;
  table: string[][] | null;
}

/** The parts of cucumber's loaded support code library this reads. */
interface LoadedSupport {
  stepDefinitions: {
    keyword: string;
    pattern: string | RegExp;
    uri: string;
    line: number;
    code: unknown;
    unwrappedCode?: unknown;
    expression: { match(text: string): { group: { value?: string }; parameterType: { name?: string } }[] | null };
  }[];
  parameterTypeRegistry: { parameterTypes: Iterable<{ name?: string }> };
}

async function loadDefinitions(): Promise<{ definitions: Definition[]; parameterTypes: string[] }> {
  const { runConfiguration } = await loadConfiguration({ provided: { paths: [] } }, { cwd: ROOT });
  const support = (await loadSupport(runConfiguration, { cwd: ROOT })) as unknown as LoadedSupport;
  const definitions = support.stepDefinitions.map((sd) => ({
    keyword: sd.keyword,
    pattern: String(sd.pattern),
    uri: sd.uri.split(path.sep).join('/'),
    line: sd.line,
    code: String(sd.unwrappedCode ?? sd.code),
    matches: (text: string) => {
      const args = sd.expression.match(text);
      return args === null ? null : args.map((arg) => ({ value: arg.group.value ?? null, type: arg.parameterType.name ?? '' }));
    },
  }));
  const builtin = new Set(['int', 'float', 'word', 'string', '', 'double', 'bigdecimal', 'byte', 'short', 'long', 'biginteger']);
  const parameterTypes = [...support.parameterTypeRegistry.parameterTypes].map((p) => p.name ?? '').filter((name) => !builtin.has(name));
  return { definitions, parameterTypes };
}

function uses(): Use[] {
  const out: Use[] = [];
  for (const uri of featureFiles(path.join(ROOT, 'features'), ROOT)) {
    const newId = IdGenerator.incrementing();
    const document = new Parser(new AstBuilder(newId), new GherkinClassicTokenMatcher()).parse(fs.readFileSync(path.join(ROOT, uri), 'utf8'));
    const keywords = new Map<string, { keyword: string; line: number }>();
    const walk = (children: readonly { background?: { steps: readonly { id: string; keyword: string; location: { line: number } }[] }; scenario?: { steps: readonly { id: string; keyword: string; location: { line: number } }[] }; rule?: { children: readonly unknown[] } }[]) => {
      for (const child of children) {
        for (const step of [...(child.background?.steps ?? []), ...(child.scenario?.steps ?? [])]) keywords.set(step.id, { keyword: step.keyword.trim(), line: step.location.line });
        if (child.rule) walk(child.rule.children as typeof children);
      }
    };
    walk(document.feature?.children ?? []);
    for (const pickle of compile({ ...document, uri }, uri, newId)) {
      for (const step of pickle.steps) {
        const at = keywords.get(step.astNodeIds[0]) ?? { keyword: '', line: 0 };
        out.push({ uri, line: at.line, keyword: at.keyword, text: step.text, table: step.argument?.dataTable?.rows.map((row) => row.cells.map((cell) => cell.value)) ?? null });
      }
    }
  }
  return out;
}

/** Router-level when a step works on the router-level replay, engine-level when on the engine scenario. */
function levelOf(definition: Definition, fileSource: string): string {
  const engine = /\.engine\b/.test(definition.code);
  const router = /\.(replay|later|configure|replayAgain|definePrefix|newRequest|prefixPrompt|setup)\b/.test(definition.code);
  if (engine && !router) return 'engine-level';
  if (router && !engine) return 'router-level';
  if (engine && router) return 'either (router-level or engine-level)';
  // A step that works through helpers: the level most of its file's steps work at.
  const fileEngine = (fileSource.match(/\bthis\.engine\b|\bworld\.engine\b/g) ?? []).length;
  const fileRouter = (fileSource.match(/\b(?:this|world)\.(?:replay|later|configure)\b/g) ?? []).length;
  if (fileEngine > 2 * fileRouter) return 'engine-level';
  if (fileRouter > 2 * fileEngine) return 'router-level';
  return 'either (router-level or engine-level)';
}

function headerOf(source: string): string {
  const lines: string[] = [];
  for (const line of source.split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join(' ').trim();
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|');

function tableBlock(table: string[][], limit = 6): string[] {
  const rows = table.slice(0, limit);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)));
  const lines = rows.map((row) => `      | ${row.map((value, c) => value.padEnd(widths[c])).join(' | ')} |`);
  if (table.length > limit) lines.push(`      … (${table.length - limit} more rows)`);
  return lines;
}

export async function generate(): Promise<string> {
  const { definitions, parameterTypes } = await loadDefinitions();
  const missing = parameterTypes.filter((name) => !(name in PARAMETER_TYPES));
  if (missing.length > 0) throw new Error(`scripts/steps-doc.ts: describe the parameter type(s) ${missing.map((m) => `{${m}}`).join(', ')} in PARAMETER_TYPES`);
  const all = uses();
  const usesOf = new Map<Definition, { use: Use; args: { value: string | null; type: string }[] }[]>();
  for (const use of all) {
    const definition = definitions.find((d) => d.matches(use.text) !== null);
    if (!definition) continue;
    const list = usesOf.get(definition) ?? [];
    list.push({ use, args: definition.matches(use.text)! });
    usesOf.set(definition, list);
  }
  const settings = new EngineScenario({ workers: 0, dp_size: 1, block_size: 16, lag_ns: 0, router: { ...DEFAULT_ROUTER_SETTINGS } }).settingNames();
  const settingValues = new Map<string, Set<string>>(settings.map((name) => [name, new Set<string>()]));
  for (const use of all) {
    if (!/these settings:$/.test(use.text) || !use.table) continue;
    for (const [name, value] of use.table) settingValues.get(name.trim())?.add(value.trim());
  }

  const out: string[] = [];
  const push = (...lines: string[]) => out.push(...lines);
  push(
    '# Step phrases',
    '',
    '<!-- Generated by `npm run docs:steps` (scripts/steps-doc.ts) from steps/ and features/. Do not edit: `npm test` fails when this file is stale. -->',
    '',
    'Every phrase a scenario can use, grouped by the step file that defines it, with what each parameter accepts, one real example from the',
    'features and whether it is router-level or engine-level. The domain words (G1, G2, HostPinned, H2D, dp rank, lane, play, cache_id, …)',
    'are defined in [the glossary](glossary.md). A step that matches no phrase fails with the three nearest phrases ("did you mean").',
    '',
    '## Router-level and engine-level steps',
    '',
    '- **Router-level** steps describe KV events, requests and a lag directly, and check what the router decided: the simulation is the',
    '  router and its mirror alone (no engine runs), so stores and removals happen exactly when a step says.',
    '- **Engine-level** steps describe a cluster with a settings table (below), conversations, requests, agentic traces and lanes, and build',
    '  the same configuration `kvqual replay` reads; the engines then decide what is cached and when events are sent.',
    '- A scenario uses one level. Steps marked *either* work with both. `Given` steps may come in any order: settings and history are',
    '  collected and applied when the first `When` runs the simulation.',
    '',
    '## Parameters',
    '',
    '| parameter | accepts |',
    '|---|---|',
    ...Object.entries(PARAMETER_TYPES)
      .filter(([name]) => name === '' || parameterTypes.includes(name) || ['int', 'float', 'word', 'string'].includes(name))
      .map(([name, what]) => `| ${code(`{${name}}`)} | ${cell(what)} |`),
    '',
    'In a phrase, `(s)` marks optional text (`worker(s)` reads `worker` or `workers`) and `a/b` offers either word.',
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
    'A named set of settings-table rows a step refers to (`a cluster of 2 aggregated workers with the reference rank profile`, optionally `… and these settings:` for the rows that differ), so the table is not copied into every feature (`steps/support/profiles.ts`):',
    '',
    ...Object.entries(RANK_PROFILES).flatMap(([name, rows]) => [`### ${name}`, '', '| setting | value |', '|---|---|', ...rows.map(([setting, value]) => `| ${cell(setting)} | ${code(cell(value))} |`), '']),
  );

  const files = [...new Set(definitions.map((d) => d.uri))].sort();
  for (const uri of files) {
    const source = fs.readFileSync(path.join(ROOT, uri), 'utf8');
    push(`## ${path.basename(uri, '.steps.ts')} (${code(uri)})`, '', headerOf(source), '');
    for (const definition of definitions.filter((d) => d.uri === uri).sort((a, b) => a.line - b.line)) {
      const found = usesOf.get(definition) ?? [];
      push(`### ${definition.keyword === 'Unknown' ? '' : `${definition.keyword} `}${definition.pattern}`, '');
      push(`- ${levelOf(definition, source)}`);
      const types = [...definition.pattern.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
      types.forEach((type, i) => {
        const values = [...new Set(found.map((f) => f.args[i]?.value).filter((v): v is string => v !== null && v !== undefined))];
        const free = type === '' || type === 'word' || type === 'string';
        const shown = free && values.length > 0 ? `; values used: ${values.slice(0, 8).map((v) => code(cell(v))).join(', ')}${values.length > 8 ? ` and ${values.length - 8} more` : ''}` : '';
        push(`- ${code(`{${type}}`)}: ${cell(PARAMETER_TYPES[type] ?? type)}${shown}`);
      });
      if (found.length === 0) push('- no feature uses it yet');
      else {
        const { use } = found[0];
        const places = new Set(found.map((f) => `${f.use.uri}:${f.use.line}`)).size;
        push(`- example (${code(`${use.uri}:${use.line}`)}; written ${places === 1 ? 'once' : `${places} times`} in the features):`, '', '```gherkin', `    ${use.keyword} ${use.text}`, ...(use.table ? tableBlock(use.table) : []), '```');
      }
      push('');
    }
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
