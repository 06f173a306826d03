// Unit tests of the scenario figure: rendered offline to SVG, byte-identical for the same
// evidence, ids local to the figure, and text from the evidence escaped by the renderer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyEvidence, evidenceComparing, evidenceFromRouterReplay } from '../../src/report/evidence';
import { axisEndMs, axisStartMs, figureSpec, niceCeil, niceFloor, normaliseSvgIds, renderFigure, spreadLabels, zoomWindow } from '../../src/report/figure';
import { lagReplay } from '../support/replays';

test('the same evidence renders to the same SVG, whatever was rendered before', async () => {
  const evidence = evidenceFromRouterReplay(lagReplay(), 1893);
  const first = await renderFigure(evidence, 'one');
  await renderFigure(evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893), 'other');
  const again = await renderFigure(evidence, 'one');
  assert.ok(first !== null && first.startsWith('<svg'));
  assert.equal(again, first);
  for (const [, id] of first.matchAll(/\sid="([^"]+)"/g)) assert.match(id, /^one-\d+$/);
});

test('the figure shows lanes per worker, the lag and the placement', async () => {
  const svg = (await renderFigure(evidenceFromRouterReplay(lagReplay(), 1893)))!;
  for (const text of ['worker 1: emits KV events', 'worker 1: visible to router', 'worker 1: requests placed', 'worker 1: engine truth', 'worker 1: router view', 'G2 (host) batch emitted', 'virtual time (ms)']) {
    assert.ok(svg.includes(text), `the figure shows "${text}"`);
  }
});

test('text in the evidence is escaped inside the SVG', async () => {
  const evidence = evidenceFromRouterReplay(lagReplay({ requestId: '<script>alert(1)</script>' }), 1893);
  const svg = (await renderFigure(evidence))!;
  assert.ok(!svg.includes('<script'), 'no script element');
  assert.ok(svg.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
});

test('nothing to draw without ranks', async () => {
  assert.equal(figureSpec(emptyEvidence(1)), null);
  assert.equal(await renderFigure(emptyEvidence(1)), null);
});

test('the time axis ends at a round number past the last instant', () => {
  assert.equal(niceCeil(17.3), 20);
  assert.equal(niceCeil(2.1), 2.5);
  assert.equal(niceCeil(0), 1);
  assert.equal(axisEndMs(evidenceFromRouterReplay(lagReplay(), 1893)), 20);
});

test('ids and their references are renamed together', () => {
  const svg = '<svg><clipPath id="clip7"><rect/></clipPath><g clip-path="url(#clip7)"/><use href="#clip7"/></svg>';
  assert.equal(normaliseSvgIds(svg, 'f'), '<svg><clipPath id="f-1"><rect/></clipPath><g clip-path="url(#f-1)"/><use href="#f-1"/></svg>');
});

test('tick labels never use exponents, and the axis starts just before the activity', async () => {
  const late = evidenceFromRouterReplay(lagReplay({ arrival: '150 ms' }), 1893);
  const svg = (await renderFigure(late))!;
  assert.doesNotMatch(svg, />[0-9.]+e[+-]\d+</, 'no "1.2e+2" tick');
  assert.equal(axisStartMs(evidenceFromRouterReplay(lagReplay(), 1893)), 9, 'activity from 10 to 15 ms on a 20 ms axis: the axis starts just before it');
  assert.equal(niceFloor(118, 60), 110);
});

test('two instants less than a pixel apart (14.999 ms vs 15 ms) get a zoomed panel that shows them apart', async () => {
  const evidence = evidenceFromRouterReplay(lagReplay({ arrival: '14.999 ms' }), 1893);
  const zoom = zoomWindow(evidence, 0, axisEndMs(evidence));
  assert.ok(zoom !== null && zoom.from < 14.999 && zoom.to > 15 && zoom.to - zoom.from < 0.01, JSON.stringify(zoom));
  const svg = (await renderFigure(evidence))!;
  assert.match(svg, /Zoom on 14\.997–15\.002 ms/);
  assert.equal(zoomWindow(evidenceFromRouterReplay(lagReplay({ arrival: '20 ms' }), 1893), 0, 25), null, 'no zoom when every instant is a pixel apart');
});

test('labels that would overlap take a second row, and what still does not fit is joined', () => {
  const labels = spreadLabels(
    [
      { t: 10, lane: 'a', label: 'r1' },
      { t: 10.01, lane: 'a', label: 'r2' },
      { t: 10.02, lane: 'a', label: 'r3' },
      { t: 10, lane: 'b', label: 'r4' },
      { t: 50, lane: 'a', label: 'r5' },
    ],
    10,
  );
  assert.deepEqual(
    labels.map((l) => [l.lane, l.label, l.row]),
    [
      ['a', 'r1', 0],
      ['a', 'r2, r3', 1],
      ['a', 'r5', 0],
      ['b', 'r4', 0],
    ],
  );
});

test('a claim comparing runs shows every run it compares, and one digest covers them all', async () => {
  const one = evidenceFromRouterReplay(lagReplay(), 1893);
  const two = evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893);
  const both = evidenceComparing({ label: 'Run 2 of 2', evidence: two }, [{ label: 'Run 1 of 2', evidence: one }]);
  assert.notEqual(both.digest, two.digest);
  const svg = (await renderFigure(both))!;
  assert.match(svg, /Run 1 of 2: Timeline/);
  assert.match(svg, /Run 2 of 2: Timeline/);
});
