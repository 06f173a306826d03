// Unit tests of how signoff.html inlines a scenario's figure (src/signoff/html.ts, inlineFigure): a
// figure this process's sanitiser wrote for the scenario's anchor (the sign-off's renderFigures) is
// inlined as written, without a second pass; any other figure goes through the sanitiser on the way
// in, or is withheld.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitiseSvg, writtenBySanitiser } from '../../src/report/svgSanitiser';
import { buildSignoff } from '../../src/signoff/model';
import { renderHtml } from '../../src/signoff/html';
import { SCENARIO_KEYS, signoffInputOf } from '../support/signoffInput';

const NS = 'xmlns="http://www.w3.org/2000/svg"';
const source = (mark: string) => `<svg ${NS} width="10" height="10"><g class="mark-${mark}"><clipPath id="c"/><rect clip-path="url(#c)" fill="#${mark}"/></g></svg>`;

test('writtenBySanitiser: only the exact figure the sanitiser wrote, under the prefix it wrote it for', () => {
  const input = source('a1a1a1');
  const written = sanitiseSvg(input, 'sc-one');
  assert.equal(writtenBySanitiser(written, 'sc-one'), true);
  assert.equal(writtenBySanitiser(written, 'sc-two'), false);
  assert.equal(writtenBySanitiser(input, 'sc-one'), false);
  assert.equal(writtenBySanitiser(`${written} `, 'sc-one'), false);
});

test('the page inlines a figure the sanitiser wrote for its anchor as written; a figure from elsewhere is sanitised, or withheld', () => {
  const anchors = buildSignoff(signoffInputOf()).views.map((view) => view.anchor);
  const written = sanitiseSvg(source('b2b2b2'), anchors[0]);
  const raw = source('c3c3c3');
  const page = renderHtml(buildSignoff(signoffInputOf(undefined, new Map([[SCENARIO_KEYS[0], written], [SCENARIO_KEYS[1], raw]]))));
  assert.ok(page.includes(written), 'the written figure, byte for byte');
  assert.ok(!page.includes('mark-c3c3c3'), 'the other figure lost its class on the way in');
  assert.ok(page.includes(`<clipPath id="${anchors[1]}-1"/>`), 'and got the ids of its own anchor');
  const withheld = renderHtml(buildSignoff(signoffInputOf(undefined, new Map([[SCENARIO_KEYS[0], '<svg/>']]))));
  assert.match(withheld, /Figure withheld — figure refused: /);
});
