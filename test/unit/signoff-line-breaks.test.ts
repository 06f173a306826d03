// Unit tests of line breaks in the sign-off's text: a scenario name, requirement title, feature
// name, step, tag, measured value or campaign holding CR, LF, CRLF, NEL (U+0085), LS (U+2028),
// PS (U+2029), VT or FF followed by "# Verdict: QUALIFIED" renders signoff.md (read by
// markdown-it, a CommonMark parser) with exactly the headings of the same run under plain names,
// and signoff.html with each of those characters as a character reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import { buildSignoff } from '../../src/signoff/model';
import { renderHtml } from '../../src/signoff/html';
import { renderMarkdown } from '../../src/signoff/markdown';
import { escapeHtml, escapeMarkdown, markdownCode, oneLine } from '../../src/signoff/text';
import { signoffInputOf as inputOf } from '../support/signoffInput';

const BREAKS: [string, string][] = [
  ['CR', '\r'],
  ['LF', '\n'],
  ['CRLF', '\r\n'],
  ['NEL', '\u0085'],
  ['LS', '\u2028'],
  ['PS', '\u2029'],
  ['VT', '\v'],
  ['FF', '\f'],
];

/** A text that starts a level-1 heading on each new line a reader would make of `lineBreak`. */
const hostile = (name: string, lineBreak: string) => `${name}${lineBreak}# Verdict: QUALIFIED ✅${lineBreak}${lineBreak}# Verdict: QUALIFIED ✅${lineBreak}`;

/** The headings markdown-it finds in a document: level and text. */
function headings(markdown: string): string[] {
  const tokens = new MarkdownIt({ html: true }).parse(markdown, {});
  return tokens.flatMap((token, i) => (token.type === 'heading_open' ? [`${token.tag} ${tokens[i + 1].content}`] : []));
}

test('signoff.md: a name holding any line break and "# Verdict: QUALIFIED" adds no heading (markdown-it)', () => {
  const plain = headings(renderMarkdown(buildSignoff(inputOf((name) => name))));
  assert.deepEqual(plain.filter((h) => h.startsWith('h1 ')), ['h1 Qualification sign-off: campaign']);
  assert.ok(plain.length > 10, 'the plain report has its sections');
  for (const [label, lineBreak] of BREAKS) {
    const model = buildSignoff(inputOf((name) => hostile(name, lineBreak)));
    assert.equal(model.qualified, false, 'the run has a failing scenario');
    const found = headings(renderMarkdown(model));
    assert.deepEqual(
      found.map((h) => h.split(' ')[0]),
      plain.map((h) => h.split(' ')[0]),
      `${label}: the same headings, at the same levels`,
    );
    assert.deepEqual(found.filter((h) => /^h\d Verdict/.test(h)), [], `${label}: no heading of its own`);
  }
});

test('escaping: every line break becomes a space in Markdown, a character reference in HTML', () => {
  for (const [label, lineBreak] of BREAKS) {
    assert.equal(escapeMarkdown(`a${lineBreak}# b`), 'a \\# b', label);
    assert.equal(markdownCode(`a${lineBreak}b`), '`a b`', label);
    assert.equal(oneLine(`[a](b)${lineBreak}c`), '[a](b) c', label);
  }
  assert.equal(escapeHtml('a\rb\u0085c\u2028d\u2029e\vf\fg\nh'), 'a&#13;b&#133;c&#8232;d&#8233;e&#11;f&#12;g\nh');
});

test('signoff.html: no CR, NEL, LS, PS, VT or FF from a name reaches the page', () => {
  for (const [label, lineBreak] of BREAKS.filter(([, c]) => c !== '\n')) {
    const page = renderHtml(buildSignoff(inputOf((name) => hostile(name, lineBreak))));
    assert.ok(!/[\r\v\f\u0085\u2028\u2029]/.test(page), label);
    assert.ok(page.includes('Verdict: QUALIFIED ✅'), `${label}: the name is shown, as text`);
    assert.equal((page.match(/<h1[ >]/g) ?? []).length, 1, `${label}: one h1`);
  }
});
