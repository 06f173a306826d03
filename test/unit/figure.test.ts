// Unit tests of the scenario figure: rendered offline to SVG, byte-identical for the same
// evidence, ids local to the figure, and text from the evidence escaped by the renderer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyEvidence, evidenceFromRouterReplay } from '../../src/report/evidence';
import { axisEndMs, figureSpec, niceCeil, normaliseSvgIds, renderFigure } from '../../src/report/figure';
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
