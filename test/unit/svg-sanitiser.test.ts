// Unit tests of the figures' allow-list sanitiser: what vega draws for kvqual passes whole (ids
// renamed, class dropped); every way an SVG could run code, load something, restyle the page or
// paint outside its box refuses the figure, naming why; what is kept is escaped again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sanitiseSvg, SvgRefused } from '../../src/report/svgSanitiser';
import { evidenceComparing, evidenceFromRouterReplay } from '../../src/report/evidence';
import { renderFigure } from '../../src/report/figure';
import { lagReplay } from '../support/replays';

const NS = 'xmlns="http://www.w3.org/2000/svg"';
const svg = (inner: string, rootAttributes = '') => `<svg ${NS}${rootAttributes}>${inner}</svg>`;

/** Asserts the sanitiser refuses the SVG with a reason matching `why`. */
function refused(input: string, why: RegExp): void {
  assert.throws(
    () => sanitiseSvg(input, 'fig'),
    (error: unknown) => error instanceof SvgRefused && why.test(error.message) && error.message.startsWith('figure refused: '),
    input,
  );
}

test('every figure vega draws for kvqual passes: same shapes, ids renamed in order, classes dropped', async () => {
  const one = evidenceFromRouterReplay(lagReplay(), 1893);
  const two = evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893);
  for (const evidence of [one, evidenceComparing({ label: 'Run 2 of 2', evidence: two }, [{ label: 'Run 1 of 2', evidence: one }])]) {
    const figure = (await renderFigure(evidence, 'scn'))!;
    assert.equal(sanitiseSvg(figure, 'scn'), figure, 'sanitising twice changes nothing');
    assert.match(figure, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" version="1\.1" width="\d+" height="\d+" viewBox="[\d .]+">/);
    assert.ok(figure.includes('clip-path="url(#scn-1)"') && figure.includes('<clipPath id="scn-1">'));
    assert.ok(!/ class=| style=|xlink/.test(figure));
    assert.ok((figure.match(/<text/g) ?? []).length > 10, 'the labels are kept');
  }
});

test('ids are renamed in order of appearance with their url(#id) references; text and values are escaped again', () => {
  assert.equal(
    sanitiseSvg(svg('<defs><clipPath id="b"><rect width="1"/></clipPath><clipPath id="a"/></defs><g clip-path="url(#a)"><path clip-path="url(#b)" d="M0,0"/></g>'), 'p'),
    `<svg ${NS}><defs><clipPath id="p-1"><rect width="1"/></clipPath><clipPath id="p-2"/></defs><g clip-path="url(#p-2)"><path clip-path="url(#p-1)" d="M0,0"/></g></svg>`,
  );
  assert.equal(
    sanitiseSvg(svg('<text aria-label="a &lt;b&gt; &quot;c&quot;">x &lt;script&gt; &amp;amp; <![CDATA[<b>]]></text>'), 'p'),
    `<svg ${NS}><text aria-label="a &lt;b&gt; &quot;c&quot;">x &lt;script&gt; &amp;amp; &lt;b&gt;</text></svg>`,
  );
  assert.equal(sanitiseSvg(`<?xml version="1.0"?>\n<!-- drawn by vega -->${svg('<g/>')}\n`, 'p'), `<svg ${NS}><g/></svg>`, 'declaration, comments and blank text go');
  assert.equal(sanitiseSvg(svg('<text>a\rb\u2028c</text>'), 'p'), `<svg ${NS}><text>a\nb&#8232;c</text></svg>`, 'XML reads a CR as a line feed; LS is a reference');
});

test('every element and attribute vega writes for kvqual\'s figures passes as written', () => {
  const inner =
    '<defs><clipPath id="c"><rect x="0" y="1" width="2" height="3"/></clipPath></defs>' +
    '<g transform="translate(1,2)" clip-path="url(#c)" fill="#fff" stroke="#000" stroke-width="1" stroke-dasharray="1,2" stroke-miterlimit="10" opacity="1" display="none" pointer-events="none" role="graphics-object" aria-hidden="true" aria-roledescription="group">' +
    '<path d="M0,0h1"/><line x2="1" y2="2"/><text font-family="Helvetica" font-size="10" font-weight="bold" text-anchor="end" aria-label="a">t</text></g>';
  const root = ' version="1.1" width="10" height="20" viewBox="0 0 10 20"';
  assert.equal(sanitiseSvg(svg(inner, root), 'c'), svg(inner.replace('id="c"', 'id="c-1"').replace('url(#c)', 'url(#c-1)'), root));
});

test('text is kept only in <text>; anywhere else it must be blank', () => {
  refused(svg('<g>QUALIFIED</g>'), /text outside a text element/);
  assert.equal(sanitiseSvg(svg('<g> \n </g>'), 'p'), `<svg ${NS}><g/></svg>`);
});

test('elements that style, run, load, embed, link or animate refuse the figure', () => {
  for (const inner of [
    '<style>#verdict { background: green }</style>',
    '<script>alert(1)</script>',
    '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">QUALIFIED</div></foreignObject>',
    '<a href="https://example.org"><rect/></a>',
    '<use href="#verdict"/>',
    '<image href="x.png"/>',
    '<set attributeName="fill" to="green"/>',
    '<animate attributeName="x" to="0"/>',
    '<filter id="f"/>',
    '<mask id="m"/>',
    '<pattern id="p"/>',
    '<iframe/>',
    '<svg/>',
  ]) refused(svg(inner), /is not an allowed element|a nested <svg>|is not an SVG element/);
  refused(svg('<x:style xmlns:x="http://www.w3.org/2000/svg"/>'), /is not an allowed element/);
  refused(svg('<html:style xmlns:html="http://www.w3.org/1999/xhtml"/>'), /is not an allowed element|namespace declaration/);
});

test('event handlers, style, href and attributes off the list refuse the figure', () => {
  for (const attribute of ['onload="alert(1)"', 'onclick="x()"', 'style="fill:red"', 'href="#a"', 'xlink:href="#a" xmlns:xlink="http://www.w3.org/1999/xlink"', 'filter="url(#f)"', 'mask="url(#m)"', 'cursor="pointer"', 'xml:space="preserve"', 'data-x="1"']) {
    refused(svg(`<rect ${attribute}/>`), /is not allowed/);
  }
});

test('the outer <svg> keeps its size and names only: no transform, position, overflow or style that would paint outside its box', () => {
  for (const attribute of [' transform="translate(0,-2000)"', ' overflow="visible"', ' x="-100"', ' style="position:fixed"', ' onload="alert(1)"', ' preserveAspectRatio="none"']) {
    refused(svg('<g/>', attribute), /is not allowed/);
  }
  assert.equal(sanitiseSvg(svg('<g/>', ' version="1.1" width="10" height="20" viewBox="0 0 10 20" class="marks"'), 'p'), `<svg ${NS} version="1.1" width="10" height="20" viewBox="0 0 10 20"><g/></svg>`);
  refused(svg('<g/>', ' d="M0,0"'), /attribute d of <svg> is not allowed/);
});

test('values name no URL but an element of the figure, call only colours and transforms, and hold no escape or separator', () => {
  const refusedValue = (value: string, why: RegExp) => refused(svg(`<clipPath id="c"/><rect fill="${value.replace(/"/g, '&quot;').replace(/</g, '&lt;')}"/>`), why);
  for (const value of ['url(https://example.org/x.svg#a)', 'url(#c) url(x)', 'url("#c")', "url('x')", 'url(data:image/svg+xml,x)']) refusedValue(value, /holds a character|names a URL|calls/);
  refusedValue('url(#nowhere)', /names #nowhere, which is no element of the figure/);
  for (const value of ['URL(x)', 'u\\72 l(x)', 'image(x)', 'var(--ok)', 'expression(alert(1))', 'element(#verdict)', '(x)']) refusedValue(value, /calls|holds a character/);
  for (const value of ['red;background:green', 'javascript:alert(1)', 'a\\b', 'a<b', 'a@import']) refusedValue(value, /holds a character/);
  refused(svg('<rect id="a b"/>'), /holds a character|is not a plain name/);
  refused(svg('<rect id="1a"/>'), /is not a plain name/);
  refused(svg('<rect id="a"/><rect id="a"/>'), /id "a" is given twice/);
  assert.equal(sanitiseSvg(svg('<clipPath id="c"/><rect fill="rgb(1, 2, 3)" stroke="#fff" transform="translate(1,2) rotate(-55 3 4) scale(2)" clip-path="url(#c)" font-family="Helvetica, &quot;Segoe UI&quot;, sans-serif"/>'), 'p'), `<svg ${NS}><clipPath id="p-1"/><rect fill="rgb(1, 2, 3)" stroke="#fff" transform="translate(1,2) rotate(-55 3 4) scale(2)" clip-path="url(#p-1)" font-family="Helvetica, &quot;Segoe UI&quot;, sans-serif"/></svg>`);
  for (const value of ['rgba(1,2,3,0.5)', 'hsl(1,2%,3%)', 'matrix(1,0,0,1,0,0)', 'skewX(3)']) refusedValue(value, /calls/);
  assert.equal(sanitiseSvg(svg('<text aria-label="url(https://x) javascript:; a\\b">t</text>'), 'p'), `<svg ${NS}><text aria-label="url(https://x) javascript:; a\\b">t</text></svg>`, 'free text is only read, never loaded');
});

test('a document that is not one well-formed SVG in the SVG namespace is refused', () => {
  refused('<svg><g/></svg>', /is not an SVG element/);
  refused(`<svg ${NS}><g></svg>`, /not well-formed XML/);
  refused(`<svg ${NS}>&xxe;</svg>`, /not well-formed XML/);
  refused(`<!DOCTYPE svg [<!ENTITY x "y">]><svg ${NS}/>`, /a DOCTYPE/);
  refused(`<?xml-stylesheet href="x.css"?><svg ${NS}/>`, /processing instruction/);
  refused(`<svg ${NS}/><svg ${NS}/>`, /not well-formed XML|second root/);
  refused(`<g ${NS}/>`, /the root is <g>/);
  refused('', /not well-formed XML|no <svg> element/);
  refused(`<svg ${NS}>QUALIFIED</svg>`, /text outside a text element/);
  refused(`<svg ${NS} xmlns:e="https://example.org/e"/>`, /a namespace declaration/);
  refused(`<svg ${NS}><rect xmlns="https://example.org/e"/></svg>`, /a namespace declaration xmlns="https:\/\/example\.org\/e" \(element 2\)/);
  refused(`<svg ${NS}><g ${NS}/></svg>`, /a namespace declaration xmlns=/);
  refused(`<svg ${NS}><g xmlns:xlink="http://www.w3.org/1999/xlink"/></svg>`, /a namespace declaration xmlns:xlink=/);
  refused(`<svg ${NS} xmlns:xlink="https://example.org/x"/>`, /a namespace declaration xmlns:xlink=/);
  refused('<svg xmlns="https://example.org/e"/>', /a namespace declaration xmlns=/);
  refused('<svg xmlns:xlink="http://www.w3.org/1999/xlink"/>', /the root does not declare the SVG namespace/);
  assert.equal(sanitiseSvg(`<svg ${NS} xmlns:xlink="http://www.w3.org/1999/xlink"/>`, 'p'), `<svg ${NS}/>`, 'the xlink declaration vega writes is dropped');
  assert.throws(() => sanitiseSvg(svg('<g/>'), 'a"b'), SvgRefused, 'an id prefix that is not a plain name');
});

test('references may come before the element they name (vega writes its clip paths last); which refusal comes first', () => {
  assert.equal(
    sanitiseSvg(svg('<g clip-path="url(#late)"><rect clip-path="url(#early)"/></g><defs><clipPath id="early"/><clipPath id="late"/></defs>'), 'p'),
    `<svg ${NS}><g clip-path="url(#p-2)"><rect clip-path="url(#p-1)"/></g><defs><clipPath id="p-1"/><clipPath id="p-2"/></defs></svg>`,
  );
  refused(svg('<rect id="a"/><rect id="a"/><g>'), /not well-formed XML/);
  refused(svg('<rect id="a"/><rect id="a"/><script/>'), /<script> is not an allowed element/);
  refused(svg('<rect clip-path="url(#x)"/><rect id="a"/><rect id="a"/>'), /id "a" is given twice/);
  refused(svg('<rect clip-path="url(#x)"/><rect clip-path="url(#y)"/>'), /names #x,/);
});

test('an element holding nothing is written closed; a <text> holding empty character data is not', () => {
  assert.equal(sanitiseSvg(svg('<text></text><text><![CDATA[]]></text><g>\n</g>'), 'p'), `<svg ${NS}><text/><text></text><g/></svg>`);
});

test('a figure sanitised again gives the same answer: under another prefix its own ids, and a refused one is refused again', () => {
  const figure = svg('<clipPath id="c"/><rect clip-path="url(#c)"/>');
  const under = (prefix: string) => `<svg ${NS}><clipPath id="${prefix}-1"/><rect clip-path="url(#${prefix}-1)"/></svg>`;
  for (const prefix of ['a', 'b', 'a', 'a']) assert.equal(sanitiseSvg(figure, prefix), under(prefix));
  for (let time = 0; time < 2; time++) refused(svg('<script/>'), /<script> is not an allowed element/);
  assert.throws(() => sanitiseSvg(figure, 'a"b'), SvgRefused, 'a remembered figure is not returned under a prefix that is not a plain name');
});

/** A generated figure: elements of the list with ids, references (some to no element), dropped classes and text. */
interface Shape {
  name: string;
  id: string | null;
  clip: string | null;
  extra: [string, string][];
  children: Shape[];
  text: { cdata: boolean; content: string }[];
}

const shape: fc.Arbitrary<Shape> = fc.letrec<{ shape: Shape }>((tie) => ({
  shape: fc.record({
    name: fc.constantFrom('g', 'defs', 'clipPath', 'path', 'rect', 'line', 'text'),
    id: fc.option(fc.constantFrom('a', 'b', 'c', 'clip1'), { nil: null }),
    clip: fc.option(fc.constantFrom('a', 'b', 'c', 'clip1', 'gone'), { nil: null }),
    extra: fc.subarray([['class', 'mark'], ['fill', 'rgb(1, 2, 3)'], ['transform', 'translate(1,-2) rotate(3)'], ['d', 'M0,0h1Z'], ['aria-label', `a <b> & "c" 'd'`]] as [string, string][]),
    children: fc.oneof({ depthSize: 'small' }, fc.constant<Shape[]>([]), fc.array(tie('shape'), { maxLength: 3 })),
    text: fc.array(fc.record({ cdata: fc.boolean(), content: fc.constantFrom('', ' ', 'x < y & z', "it's \"1\"", 'ms\n') }), { maxLength: 2 }),
  }),
})).shape;

const escapedText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The shape as an SVG document's element. */
function source(node: Shape): string {
  const attributes = [...(node.id === null ? [] : [['id', node.id]]), ...(node.clip === null ? [] : [['clip-path', `url(#${node.clip})`]]), ...node.extra];
  const inside = node.name === 'text' ? node.text.map((t) => (t.cdata ? `<![CDATA[${t.content}]]>` : escapedText(t.content))).join('') : node.children.map(source).join(' ');
  return `<${node.name}${attributes.map(([n, v]) => ` ${n}="${escapedText(v)}"`).join('')}>${inside}</${node.name}>`;
}

/** What the sanitiser must make of the shapes, worked out on the tree: ids renamed in order, references after them, or the refusal. */
function expected(nodes: Shape[], prefix: string): string | RegExp {
  const ids = new Map<string, string>();
  const order: Shape[] = [];
  const walk = (node: Shape) => (order.push(node), node.name !== 'text' && node.children.forEach(walk));
  nodes.forEach(walk);
  for (const node of order) {
    if (node.id === null) continue;
    if (ids.has(node.id)) return new RegExp(`id "${node.id}" is given twice`);
    ids.set(node.id, `${prefix}-${ids.size + 1}`);
  }
  const gone = order.find((node) => node.clip !== null && !ids.has(node.clip));
  if (gone) return new RegExp(`names #${gone.clip}, which is no element`);
  const written = (node: Shape): string => {
    const attributes = [...(node.id === null ? [] : [['id', ids.get(node.id)]]), ...(node.clip === null ? [] : [['clip-path', `url(#${ids.get(node.clip)})`]]), ...node.extra.filter(([n]) => n !== 'class')];
    const texts = node.text.filter((t) => t.cdata || t.content !== '');
    const inside = node.name === 'text' ? (texts.length ? texts.map((t) => escapedText(t.content)).join('') : null) : node.children.length ? node.children.map(written).join('') : null;
    const open = `<${node.name}${attributes.map(([n, v]) => ` ${n}="${escapedText(v!)}"`).join('')}`;
    return inside === null ? `${open}/>` : `${open}>${inside}</${node.name}>`;
  };
  return nodes.length ? `<svg ${NS}>${nodes.map(written).join('')}</svg>` : `<svg ${NS}/>`;
}

test('generated figures: the output (or the refusal) is what the element tree says, in one pass as in two', () => {
  fc.assert(
    fc.property(fc.array(shape, { maxLength: 4 }), fc.constantFrom('fig', 'scn-a.b'), (nodes, prefix) => {
      const document = svg(nodes.map(source).join('\n'));
      const want = expected(nodes, prefix);
      if (typeof want === 'string') assert.equal(sanitiseSvg(document, prefix), want);
      else refused(document, want);
    }),
    { numRuns: 400, seed: 41 },
  );
});
