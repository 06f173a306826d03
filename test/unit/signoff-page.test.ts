// The sign-off as a reader meets it: requirements in natural order (TIME-1, TIME-2, TIME-10) in
// every list of signoff.html, signoff.md and signoff.json; what ran said in one place; coverage in
// one plain sentence with the developers' figures folded; and a summary chart whose words are at
// least 11 px, whose legend stays inside the drawing and whose one failed scenario is a bar of at
// least 8 px, drawn at a size that fits the page without shrinking.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareNatural } from '../../src/order';
import { evidenceFromRouterReplay, measurement } from '../../src/report/evidence';
import { parseRegistry } from '../../src/signoff/requirements';
import { parseRun } from '../../src/signoff/messages';
import { buildSignoff, coverageSentence, simulatorLines, type MatrixRow, type SignoffInput } from '../../src/signoff/model';
import { CHART, renderHtml, summaryChart } from '../../src/signoff/html';
import { renderMarkdown } from '../../src/signoff/markdown';
import { toSignoffJson } from '../../src/signoff/json';
import { figure } from '../../src/signoff/coverage';
import { FakeScenario, fakeMessages } from '../support/messages';
import { lagReplay } from '../support/replays';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const COMMAND = 'npm run qualify -- --out reports-of-the-page-test';

/** A registry in the order people added to it, not the order they read. */
const REGISTRY = parseRegistry(`
requirements:
  - { id: TIME-10, title: Ten, source: s, owner: QA }
  - { id: TIME-3, title: Three, source: s, owner: QA }
  - { id: G2-10, title: Pool ten, source: s, owner: QA }
  - { id: TIME-1, title: One, source: s, owner: QA }
  - { id: G2-9, title: Pool nine, source: s, owner: QA }
  - { id: TIME-2, title: Two, source: s, owner: QA }
`);
const NATURAL = ['G2-9', 'G2-10', 'TIME-1', 'TIME-2', 'TIME-3', 'TIME-10'];

const evidence = { ...evidenceFromRouterReplay(lagReplay(), 1893), measurements: [measurement('host blocks counted', 4, 'blocks')] };

function scenario(name: string, line: number, tags: string[], status: 'PASSED' | 'FAILED' = 'PASSED'): FakeScenario {
  return {
    uri: 'features/router/page.feature',
    line,
    name,
    tags,
    steps: [
      { keyword: 'Given', text: 'a cluster', status: 'PASSED' },
      { keyword: 'Then', text: 'it is placed', status, ...(status === 'FAILED' ? { message: 'expected 1, got 2' } : {}) },
    ],
    evidence,
  };
}

function input(scenarios: FakeScenario[], overrides: Partial<SignoffInput> = {}): SignoffInput {
  const run = parseRun(fakeMessages(scenarios));
  return unitSignoffInput(run, REGISTRY, {
    campaign: 'page campaign',
    subject: { packageName: 'kvqual', packageVersion: '0.1.0', commit: COMMIT, worktree: 'clean working tree', node: 'v20.20.2' },
    command: COMMAND,
    companions: [{ label: 'JUnit XML', file: 'junit.xml' }],
    ...overrides,
  });
}

/** Every requirement but TIME-3 and G2-9 has a scenario; one scenario traces to TIME-10 and TIME-2 (tagged in that order). */
const SCENARIOS = [
  scenario('ten and two', 3, ['@TIME-10', '@TIME-2']),
  scenario('one', 6, ['@TIME-1']),
  scenario('pool ten', 9, ['@G2-10'], 'FAILED'),
];

/** The requirement ids in the order `pattern`'s first group finds them in `text`. */
const idsIn = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]);

test('natural order: runs of digits compare as numbers, the rest by code unit, and the order is total', () => {
  const ids = ['TIME-10', 'TIME-3', 'G2-10', 'TIME-1', 'G2-9', 'TIME-2', 'AISIM-1894', 'AISIM-1893', 'AGX-1'];
  assert.deepEqual([...ids].sort(compareNatural), ['AGX-1', 'AISIM-1893', 'AISIM-1894', 'G2-9', 'G2-10', 'TIME-1', 'TIME-2', 'TIME-3', 'TIME-10']);
  assert.ok(compareNatural('@TIME-2', '@TIME-10') < 0 && compareNatural('TIME-10', 'TIME-2') > 0);
  assert.ok(compareNatural('TIME', 'TIME-1') < 0, 'a prefix first');
  assert.ok(compareNatural('X-07', 'X-7') !== 0 && compareNatural('X-07', 'X-7') === -compareNatural('X-7', 'X-07'), 'the same number written two ways: still an order');
  assert.ok(compareNatural('X-99999999999999999999', 'X-100000000000000000000') < 0, 'numbers longer than a double holds');
  assert.equal(compareNatural('TIME-1', 'TIME-1'), 0);
});

test('requirements are listed in natural order in signoff.html, signoff.md and signoff.json, whatever the registry\'s order', () => {
  const model = buildSignoff(input(SCENARIOS));
  assert.deepEqual(model.matrix.map((row) => row.requirement.id), NATURAL);
  const html = renderHtml(model);
  assert.deepEqual(idsIn(html, /<details class="req" id="req-([^"]+)"/g), NATURAL, 'the requirement view');
  assert.deepEqual(idsIn(summaryChart(model.matrix), /<title>([^:]+):/g).filter((id, i, all) => all.indexOf(id) === i), NATURAL, 'the chart');
  assert.match(html, /<a href="#req-TIME-2">TIME-2<\/a>, <a href="#req-TIME-10">TIME-10<\/a>/, 'a scenario\'s requirements in the matrix');
  assert.match(html, /<th>Requirements<\/th><td>TIME-2, TIME-10<\/td>/, 'and on its card');
  const gaps = html.slice(html.indexOf('<h3>Requirements without a scenario</h3>'), html.indexOf('<h3>Scenarios without a requirement tag</h3>'));
  assert.deepEqual(idsIn(gaps, /<strong>([^<]+)<\/strong>/g), ['G2-9', 'TIME-3'], 'Gaps');
  assert.deepEqual(idsIn(html, /<option value="@([^"]+)">/g), ['G2-10', 'TIME-1', 'TIME-2', 'TIME-10'], 'the tag filter');

  const markdown = renderMarkdown(model);
  assert.deepEqual(idsIn(markdown, /^- [✅❌] \*\*([^*]+)\*\*/gm), NATURAL, 'the requirement view of signoff.md');
  assert.match(markdown, /\| TIME-2, TIME-10 \|/, 'its matrix');
  const json = toSignoffJson(model);
  assert.deepEqual(json.requirements.map((r) => r.id), NATURAL);
  assert.deepEqual(json.gaps.uncovered_requirements, ['G2-9', 'TIME-3']);
  assert.deepEqual(json.scenarios[0].requirements, ['TIME-2', 'TIME-10']);
});

/** `html` without its tags, attributes and the script: what a reader sees. */
const visibleText = (html: string) => html.replace(/<script>[\s\S]*?<\/script>/g, '').replace(/<[^>]*>/g, ' ');
const count = (text: string, what: string) => text.split(what).length - 1;

test('what ran is said once: the commit, the scenario set, the registry and the command appear in one place of each report, "The run" no more', () => {
  const model = buildSignoff(input(SCENARIOS, { scope: { features: 'features', requirements: 'requirements.yaml', requirements_digest: `sha256:${'e'.repeat(64)}`, repository_suite: true } }));
  const html = renderHtml(model);
  const text = visibleText(html);
  for (const [what, value] of [
    ['the commit', COMMIT],
    ['the scenario set', model.scenarioSet.digest],
    ['the registry', `sha256:${'e'.repeat(64)}`],
    ['the command', COMMAND],
    ['the Node.js version', 'v20.20.2'],
  ]) {
    assert.equal(count(text, value), 1, `${what} once in signoff.html`);
  }
  assert.ok(!/id="details-of-the-run"|>The run</.test(html), 'no section "The run"');
  const qualified = html.slice(html.indexOf('<h3 id="qualified">'), html.indexOf('</table>', html.indexOf('<h3 id="qualified">')));
  for (const value of [COMMIT, model.scenarioSet.digest, COMMAND, 'v20.20.2', 'cucumber-js 12.9.0']) assert.ok(qualified.includes(value), `"What was qualified" holds ${value}`);
  assert.match(html, /<footer>Beside this report: JUnit XML <code>junit\.xml<\/code>/, 'the files beside the report, in the footer');

  const markdown = renderMarkdown(model);
  for (const value of [COMMIT, model.scenarioSet.digest, COMMAND]) assert.equal(count(markdown, value), 1, `${value} once in signoff.md`);
});

const COVERAGE = {
  scope: 'the unit tests and the feature suite on the compiled JavaScript',
  lines: figure(873, 1000),
  branches: figure(701, 1000),
  functions: figure(912, 1000),
  groups: [{ path: 'src/sim/', files: 3, lines: figure(873, 1000), branches: figure(80, 100), functions: figure(9, 10) }],
};

test('coverage is one plain sentence for approvers; the figures for developers are folded under it', () => {
  const sentence = "The scenarios exercised 87.3 % of the lines of kvqual's code (src/); each of its folders is listed in the details below.";
  assert.equal(coverageSentence(COVERAGE), sentence);
  const model = buildSignoff(input(SCENARIOS, { coverage: COVERAGE }));
  const html = renderHtml(model);
  const section = html.slice(html.indexOf('<h2 id="coverage">'), html.indexOf('<h2 id="scenarios">'));
  const [before, folded] = section.split('<details id="coverage-details">');
  assert.ok(folded !== undefined, 'the details are a fold');
  assert.match(before, /<p id="coverage-sentence">The scenarios exercised 87\.3 % of the lines of kvqual&#39;s code \(src\/\); each of its folders is listed in the details below\.<\/p>/);
  assert.ok(!/branches|functions|70\.1|91\.2|compiled JavaScript/.test(before), `nothing for developers before the fold: ${before}`);
  for (const detail of ['branches 70.1%', 'functions 91.2%', 'compiled JavaScript', 'src/sim/']) assert.ok(folded.includes(detail), `${detail} in the fold`);

  const markdown = renderMarkdown(model);
  const md = markdown.slice(markdown.indexOf('## Coverage of src/'), markdown.indexOf('\n## Scenarios\n'));
  const [mdBefore, mdFolded] = md.split('<details>');
  assert.ok(mdBefore.includes("The scenarios exercised 87.3 % of the lines of kvqual's code (src/)"), mdBefore);
  assert.ok(!/branches|functions/.test(mdBefore) && /branches 70\.1%/.test(mdFolded) && /src\/sim\//.test(mdFolded));
});

test("with the tools of src/ measured too, the sentence gives the simulator's share first and all of src/ after it", () => {
  const group = (at: string, covered: number, total: number) => ({ path: at, files: 1, lines: figure(covered, total), branches: figure(1, 1), functions: figure(1, 1) });
  // The simulator: 930 of 1,000 lines; the tools (and a folder below one of them): 70 of 1,000.
  const groups = [group('src/', 180, 200), group('src/engine/', 750, 800), group('src/cli/', 0, 400), group('src/signoff/', 30, 300), group('src/signoff/inner/', 0, 100), group('src/sweep/', 0, 100), group('src/fuzz/', 40, 100)];
  const coverage = { ...COVERAGE, lines: figure(1000, 2000), groups };
  assert.deepEqual(simulatorLines(coverage), figure(930, 1000));
  assert.equal(
    coverageSentence(coverage),
    'The scenarios exercised 93 % of the lines of the simulator they qualify; the tools around it (command line, sweeps, generated workloads, this sign-off) are checked by the unit tests instead, so of all of src/ it is 50 %. Each folder is listed in the details below.',
  );
});

/** A matrix row of `passed` passing and `failed` failing scenarios. */
function row(id: string, passed: number, failed: number): MatrixRow {
  const view = (status: 'PASSED' | 'FAILED') => ({ view: { scenario: { status } } as MatrixRow['scenarios'][number]['view'], measured: [] });
  return {
    requirement: { id, title: id, source: 's', owner: 'QA', status: 'active' },
    status: '',
    ok: failed === 0 && passed > 0,
    scenarios: [...Array.from({ length: passed }, () => view('PASSED')), ...Array.from({ length: failed }, () => view('FAILED'))],
  };
}

interface Drawn {
  width: number;
  height: number;
  texts: { x: number; y: number; size: number; anchor: string; words: string }[];
  rects: { x: number; y: number; width: number; height: number; fill: string; title: string }[];
}

/** The chart's size, texts and rectangles, read from its SVG. */
function drawn(svg: string): Drawn {
  const number = (tag: string, name: string) => Number(new RegExp(` ${name}="([^"]+)"`).exec(tag)?.[1] ?? NaN);
  const open = /^<svg[^>]*>/.exec(svg)![0];
  return {
    width: number(open, 'width'),
    height: number(open, 'height'),
    texts: [...svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)].map(([, tag, words]) => ({
      x: number(tag, 'x'),
      y: number(tag, 'y'),
      size: number(tag, 'font-size'),
      anchor: / text-anchor="([^"]+)"/.exec(tag)?.[1] ?? 'start',
      words: words.replace(/&amp;/g, '&'),
    })),
    rects: [...svg.matchAll(/<rect([^>]*?)\/?>(?:<title>([^<]*)<\/title><\/rect>)?/g)].map(([, tag, title]) => ({
      x: number(tag, 'x'),
      y: number(tag, 'y'),
      width: number(tag, 'width'),
      height: number(tag, 'height'),
      fill: / fill="([^"]+)"/.exec(tag)![1],
      title: title ?? '',
    })),
  };
}

test('the summary chart: words of at least 11 px inside the drawing, the legend within it, one failed scenario a bar of at least 8 px, drawn at a size the page holds', () => {
  // The suite's shape: one requirement with a hundred scenarios beside many with one or two, one of them failed.
  const rows = [row('AISIM-1893', 101, 1), ...Array.from({ length: 54 }, (_, i) => row(`REQ-${i + 1}`, 1 + (i % 3), i === 7 ? 1 : 0)), row('TIME-9', 0, 0)];
  const chart = drawn(summaryChart(rows));
  assert.ok(chart.width <= 1144, `drawn at ${chart.width} px: the page's column (1,144 px at 1280) holds it unshrunk`);
  assert.ok(chart.width <= 703, `and a printed A4 page's (703 px) too: ${chart.width} px`);
  assert.ok(chart.texts.length > 56, 'a label per requirement, and the legend');
  for (const text of chart.texts) {
    assert.ok(text.size >= 11, `"${text.words}" at ${text.size} px`);
    // Helvetica's widest characters are under 0.62 em; the layout's estimate must keep every word inside.
    const width = text.words.length * text.size * 0.62;
    const [left, right] = text.anchor === 'end' ? [text.x - width, text.x] : [text.x, text.x + width];
    assert.ok(left >= 0 && right <= chart.width && text.y - text.size >= 0 && text.y <= chart.height, `"${text.words}" inside the drawing: ${left}..${right} of ${chart.width}, y ${text.y} of ${chart.height}`);
  }
  for (const words of ['passed', 'not passed', 'no scenario']) assert.ok(chart.texts.some((t) => t.words === words && t.y < 30), `the legend says "${words}" above the bars`);
  const failed = chart.rects.filter((r) => r.fill === '#e03131' && r.title !== '');
  assert.deepEqual(failed.map((r) => r.title), ['AISIM-1893: 101 passed, 1 not passed', 'REQ-8: 2 passed, 1 not passed']);
  for (const bar of failed) assert.ok(bar.width >= 8 && bar.height >= 8, `one failed scenario shows: ${bar.width} × ${bar.height} px`);
  for (const bar of chart.rects.filter((r) => r.title !== '')) assert.ok(bar.width >= 8 && bar.height >= 8, `${bar.title}: ${bar.width} × ${bar.height} px`);
  assert.ok(chart.texts.some((t) => t.words === ' · 1 not passed'), 'the count of the failed one is written beside its bar');
  assert.ok(chart.rects.some((r) => r.title === 'TIME-9: no scenario' && r.fill === 'none'), 'a requirement without a scenario is outlined');
  // Bars are in proportion: a hundred scenarios' bar is the longest, a scenario's far shorter.
  const green = (title: string) => chart.rects.find((r) => r.title.startsWith(title) && r.fill === '#2f9e44')!.width;
  assert.ok(green('AISIM-1893') > 10 * green('REQ-1:'), `${green('AISIM-1893')} vs ${green('REQ-1:')}`);
});

test('the summary chart of a few requirements, and of many, stays inside its width', () => {
  for (const rows of [[row('LAG-1', 1, 0)], Array.from({ length: 200 }, (_, i) => row(`LONGPREFIX-${i + 1000}`, 3, 1))]) {
    const chart = drawn(summaryChart(rows));
    assert.equal(chart.width, CHART.width);
    for (const rect of chart.rects) assert.ok(rect.x >= 0 && rect.x + rect.width <= chart.width && rect.y + rect.height <= chart.height, `${rect.title} inside`);
    for (const text of chart.texts) assert.ok(text.size >= 11);
  }
});
