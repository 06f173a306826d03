// Determinism is the product: nothing in src/ or steps/ reads the wall clock, a random source,
// facts of the machine (its name, its cores) or its locale (a collation, an unpinned number
// format). A scenario that leans on the minute or the host passes both runs of the determinism
// proof, which overlap in time on one machine, and then replays differently elsewhere; a sign-off
// sorted by the locale's collation changed with LANG. The simulator takes time from its kernel and
// randomness from its seed. Those who need a clock (the qualify and fuzz scripts, benchmarks) live
// outside both folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

/** What reads the clock, a random source or the machine, as written in TypeScript. */
const FORBIDDEN: [RegExp, string][] = [
  [/\bDate\.now\s*\(/, 'Date.now()'],
  [/\bnew\s+Date\s*\(/, 'new Date()'],
  [/(?<!new\s+)(?<![.\w])Date\s*\(\s*\)/, 'Date()'],
  [/\bperformance\.now\s*\(/, 'performance.now()'],
  [/\bprocess\.hrtime\b/, 'process.hrtime'],
  [/\bprocess\.uptime\s*\(/, 'process.uptime()'],
  [/\bMath\.random\s*\(/, 'Math.random()'],
  [/\brandom(?:Bytes|UUID|Int|Fill(?:Sync)?)\s*\(/, 'a random source of node:crypto'],
  [/\bgetRandomValues\s*\(/, 'crypto.getRandomValues()'],
  [/\b(?:os\.)?(?:hostname|cpus|availableParallelism|networkInterfaces|userInfo)\s*\(\s*\)/, 'a fact of the machine (node:os)'],
  [/\.localeCompare\s*\(|\bIntl\.Collator\b/, "the machine's locale (a collation: use compareText of src/order.ts)"],
  [/\.toLocale(?:Lower|Upper)?(?:String|DateString|TimeString|Case)\s*\(\s*\)/, "the machine's locale (toLocale… without a locale: give 'en-US')"],
];

/** The text without comments (line and block), so a comment may name what the code must not call. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Each forbidden read in `text`: its line number and what it is. */
export function clockReads(text: string): { line: number; what: string }[] {
  const found: { line: number; what: string }[] = [];
  code(text)
    .split('\n')
    .forEach((line, i) => {
      for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) found.push({ line: i + 1, what });
    });
  return found;
}

/**
 * Reads allowed where they cannot reach a result, each with why: the default number of sweep
 * worker processes is the machine's cores (points are keyed by index, so how many run at once
 * never shows in the output); the figure cache's secret is random bytes (a key for the HMACs that
 * name and seal its entries: a figure is the same bytes from the cache or drawn).
 */
const ALLOWED = new Map([
  ['src/cli/sweepPool.ts', 'a fact of the machine (node:os)'],
  ['steps/support/figureCache.ts', 'a random source of node:crypto'],
]);

function sources(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(?:ts|js)$/.test(f))
    .map((f) => path.join(dir, f).split(path.sep).join('/'))
    .sort();
}

test('nothing in src/ or steps/ reads the wall clock, a random source, the machine or its locale', () => {
  const found = [...sources('src'), ...sources('steps')].flatMap((file) =>
    clockReads(fs.readFileSync(path.join(ROOT, file), 'utf8'))
      .filter((r) => ALLOWED.get(file) !== r.what)
      .map((r) => `${file}:${r.line}: ${r.what}`),
  );
  assert.deepEqual(found, []);
});

test('the check finds each kind of read, in code but not in comments', () => {
  const text = [
    'const a = Date.now();',
    'const b = new Date();',
    'const c = performance.now();',
    'const d = process.hrtime.bigint();',
    'const e = Math.random() * 1e9;',
    "const f = require('node:crypto').randomUUID();",
    'const g = os.hostname();',
    '// Date.now() in a comment is fine',
    '/* so is Math.random() here */',
    "const h = 'http://example.org'; const i = Math.floor(Date.now() / 60000);",
    'names.sort((a, b) => a.localeCompare(b));',
    "const n = (1234).toLocaleString(); const m = (1234).toLocaleString('en-US');",
  ].join('\n');
  assert.deepEqual(clockReads(text).map((r) => `${r.line} ${r.what}`), [
    '1 Date.now()',
    '2 new Date()',
    '3 performance.now()',
    '4 process.hrtime',
    '5 Math.random()',
    '6 a random source of node:crypto',
    '7 a fact of the machine (node:os)',
    '10 Date.now()',
    "11 the machine's locale (a collation: use compareText of src/order.ts)",
    "12 the machine's locale (toLocale… without a locale: give 'en-US')",
  ]);
});
