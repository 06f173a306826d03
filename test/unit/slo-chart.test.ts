// Unit tests of an SLO scenario's chart (src/report/sloChart.ts, src/slo/charts.ts): the CDF's
// steps, the SLO line drawn at the limit's x-position and the measured value's marker on the CDF,
// both runs of a ratio drawn, goodput drawn per objective, the claim in words (met and missed), and
// the card's text equivalent in signoff.md and caption in signoff.html.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyEvidence, type ScenarioEvidence } from '../../src/report/evidence';
import { renderFigure } from '../../src/report/figure';
import { axisEnd, cdfPoints, CDF_STEPS, durationWords, PANEL_WIDTH, sloChartSpec, type SloChart } from '../../src/report/sloChart';
import { ceilingLine, goodputChart, latencyChart, ratioChart, shareAtMost } from '../../src/slo/charts';
import { statisticOf } from '../../src/slo/claims';
import { sloCardLines, sloFigureCaption } from '../../src/signoff/sloCard';
import { parseRun } from '../../src/signoff/messages';
import { parseRegistry } from '../../src/signoff/requirements';
import { buildSignoff } from '../../src/signoff/model';
import { renderMarkdown } from '../../src/signoff/markdown';
import { renderHtml } from '../../src/signoff/html';
import { fakeMessages, type FakeScenario } from '../support/messages';

/** 10, 20, …, 1000 ms. */
const TEN_TO_A_THOUSAND = Array.from({ length: 100 }, (_, i) => 10 * (i + 1));
const P99 = { kind: 'percentile' as const, p: 99 };
const PLOT_HEIGHT = 200;

const withCharts = (slo: SloChart[]): ScenarioEvidence => ({ ...emptyEvidence(1893), simulation: 'trace replay', digest: 'sha256:1', slo });

/** The `translate(x,y)` of the element whose aria-label is `label`, or null. */
function placeOf(svg: string, label: RegExp): { x: number; y: number } | null {
  for (const [element] of svg.matchAll(/<(?:line|path)\s[^>]*>/g)) {
    const aria = /aria-label="([^"]*)"/.exec(element);
    const at = /transform="translate\(([-\d.e]+),([-\d.e]+)\)"/.exec(element);
    if (aria && at && label.test(aria[1])) return { x: Number(at[1]), y: Number(at[2]) };
  }
  return null;
}

test('the CDF has one step per distinct value, from the smallest at 0 to the largest at 1', () => {
  assert.deepEqual(cdfPoints([30, 10, 20, 20]), [
    [10, 0],
    [10, 0.25],
    [20, 0.75],
    [30, 1],
  ]);
  assert.deepEqual(cdfPoints([]), []);
  const many = cdfPoints(Array.from({ length: 5000 }, (_, i) => i));
  assert.ok(many.length <= CDF_STEPS + 2, `${many.length} steps kept of 5000`);
  assert.deepEqual(many[many.length - 1], [4999, 1]);
  for (let i = 1; i < many.length; i++) assert.ok(many[i][0] > many[i - 1][0] && many[i][1] > many[i - 1][1], 'steps rise in value and share');
});

test('a percentile chart draws the SLO line at the limit\'s x-position and the measured marker at (value, p %)', async () => {
  const measured = statisticOf(TEN_TO_A_THOUSAND, P99)!;
  assert.equal(measured, 990);
  const chart = latencyChart({ run: 'KV-aware routing', values: TEN_TO_A_THOUSAND, statistic: P99, metric: 'time to first token', measured_ms: measured, limit_ms: 1200 });
  assert.equal(chart.sentence, 'p99 time to first token 990 ms ≤ SLO 1.2 s');
  assert.equal(chart.met, true);
  const end = axisEnd(chart.panels[0]);
  assert.equal(end, 1500, 'the axis ends at a round number past the limit');
  const svg = (await renderFigure(withCharts([chart]), 'slo'))!;
  assert.ok(svg !== null && svg.startsWith('<svg'), 'the SLO chart is the scenario\'s figure');
  const line = placeOf(svg, /^SLO line at 1200$/);
  assert.ok(line, 'the SLO line is drawn');
  assert.equal(line.x, (1200 / 1500) * PANEL_WIDTH, 'at 1200 ms on a 0–1500 ms axis: 480 px');
  const marker = placeOf(svg, /^measured p99 time to first token 990 ms$/);
  assert.ok(marker, 'the measured value is marked');
  assert.ok(Math.abs(marker.x - (990 / 1500) * PANEL_WIDTH) < 1e-6, `marker at x ${marker.x}`);
  assert.ok(Math.abs(marker.y - (1 - 0.99) * PLOT_HEIGHT) < 1e-6, `marker at 99 % (y ${marker.y})`);
  for (const words of ['p99 time to first token 990 ms ≤ SLO 1.2 s: met', 'SLO: at most 1.2 s', 'time to first token (ms)', 'KV-aware routing (100 requests)']) {
    assert.ok(svg.includes(words), `the chart says "${words}"`);
  }
});

test('a missed objective says so, and the mean is marked where it cuts the CDF', async () => {
  const mean = statisticOf(TEN_TO_A_THOUSAND, { kind: 'mean' })!;
  const chart = latencyChart({ run: 'KV-aware routing', values: TEN_TO_A_THOUSAND, statistic: { kind: 'mean' }, metric: 'time to first token', measured_ms: mean, limit_ms: 400 });
  assert.equal(chart.sentence, 'mean time to first token 505 ms > SLO 400 ms');
  assert.equal(chart.met, false);
  assert.equal(chart.panels[0].markers[0].share, 0.5, 'half the requests are at most the mean');
  const svg = (await renderFigure(withCharts([chart]), 'slo'))!;
  assert.ok(svg.includes('mean time to first token 505 ms &gt; SLO 400 ms: missed'));
  const end = axisEnd(chart.panels[0]);
  assert.equal(placeOf(svg, /^SLO line at 400$/)?.x, (400 / end) * PANEL_WIDTH);
});

test('a ratio between runs draws both runs\' CDFs, each marked, and the line where the candidate would just meet the ratio', async () => {
  const slower = TEN_TO_A_THOUSAND.map((v) => v * 2);
  const chart = ratioChart({
    statistic: P99,
    metric: 'time to first token',
    candidate: { run: 'KV-aware routing', values: TEN_TO_A_THOUSAND, measured_ms: 990 },
    baseline: { run: 'round robin', values: slower, measured_ms: 1980 },
    ratio: 2,
    required: 1.5,
  });
  assert.equal(chart.sentence, 'p99 time to first token: round robin 1.98 s ÷ KV-aware routing 990 ms = 2× ≥ SLO 1.5×');
  assert.equal(chart.panels[0].limit.value, 1320, 'round robin\'s 1980 ms ÷ 1.5');
  const svg = (await renderFigure(withCharts([chart]), 'slo'))!;
  const end = axisEnd(chart.panels[0]);
  assert.equal(placeOf(svg, /^SLO line at 1320$/)?.x, (1320 / end) * PANEL_WIDTH);
  assert.ok(placeOf(svg, /^KV-aware routing: p99 time to first token 990 ms$/), 'the candidate is marked');
  assert.ok(placeOf(svg, /^round robin: p99 time to first token 1\.98 s$/), 'the baseline is marked');
  for (const words of ['KV-aware routing (100 requests)', 'round robin (100 requests)']) assert.ok(svg.includes(words), `both runs drawn: ${words}`);
});

test('goodput draws one panel per objective, each marked where its limit cuts the CDF; the ceiling\'s share is a line without a chart', async () => {
  const chart = goodputChart({ run: 'KV-aware routing', ttft_values: TEN_TO_A_THOUSAND, itl_values: [5, 50, 150, 200], ttft_limit_ms: 500, itl_limit_ms: 100, percent: 48, required_percent: 95 });
  assert.equal(chart.met, false);
  assert.deepEqual(chart.panels.map((p) => [p.limit.value, p.markers[0].share]), [
    [500, 0.5],
    [100, 0.5],
  ]);
  const svg = (await renderFigure(withCharts([chart]), 'slo'))!;
  assert.ok(placeOf(svg, /^SLO line at 500$/) && placeOf(svg, /^SLO line at 100$/), 'a line per objective');
  assert.ok(svg.includes('goodput 48 % &lt; SLO 95 %: missed'));
  assert.equal(shareAtMost([1, 2, 3], 2), 2 / 3);
  const ceiling = ceilingLine({ percent: 80.158, required_percent: 75 });
  assert.equal(sloChartSpec([ceiling]), null, 'an aggregate over blocks has no per-request CDF');
  assert.equal(await renderFigure(withCharts([ceiling])), null);
  assert.deepEqual(sloCardLines([ceiling]), ['prefix reuse 80.16 % of the infinite-cache ceiling (block-weighted) ≥ SLO 75 %: met']);
});

test('durations read in words: ms below a second, s from a second', () => {
  assert.deepEqual([durationWords(412.5), durationWords(1822.16202), durationWords(2000)], ['412.5 ms', '1.822 s', '2 s']);
});

test('the card says the claim in one line in signoff.md, and as the chart\'s caption in signoff.html', () => {
  const chart = latencyChart({ run: 'KV-aware routing', values: TEN_TO_A_THOUSAND, statistic: P99, metric: 'time to first token', measured_ms: 990, limit_ms: 1200 });
  const scenario: FakeScenario = {
    uri: 'features/slo/trace_slos.feature',
    line: 12,
    name: 'p99 within its limit',
    tags: ['@SLO-1'],
    steps: [{ keyword: 'Then', text: 'p99 time to first token is at most 1.2 s', status: 'PASSED' }],
    evidence: withCharts([chart]),
  };
  const run = parseRun(fakeMessages([scenario]));
  const model = buildSignoff(
    unitSignoffInput(run, parseRegistry('requirements:\n  - { id: SLO-1, title: Latency SLOs hold, source: issue 40, owner: QA }\n'), {
      figures: new Map([['features/slo/trace_slos.feature:12', '<svg xmlns="http://www.w3.org/2000/svg"/>']]),
    }),
  );
  const markdown = renderMarkdown(model);
  assert.match(markdown, /\*\*SLO:\*\* p99 time to first token 990 ms ≤ SLO 1\.2 s: met\n\n!\[CDF of the measured metric with the SLO limit and the measured value\]\(signoff-assets\/sc-features-slo-trace-slos-12\.svg\)/);
  const html = renderHtml(model);
  assert.ok(html.includes(`<figcaption>${sloFigureCaption([chart])}</figcaption>`), 'the caption is the claim and how to read the chart');
  assert.ok(!html.includes('Top: arrivals, KV event batches'), 'not the timeline\'s caption');
});
