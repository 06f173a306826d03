// Escaping for the reports: HTML text and attributes, Markdown inline text and table cells, and
// fenced code blocks that no content can break out of. Everything a scenario says passes here.
// Every character some reader takes for the end of a line (CR alone, LF, NEL U+0085, LINE and
// PARAGRAPH SEPARATOR U+2028/9, and VT, FF) is a space in inline Markdown and a character
// reference in HTML, so no name can start a line of its own ("# Verdict: QUALIFIED").

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Characters that end a line for CommonMark (CR, LF), for Unicode (NEL, LS, PS) or for some text tools (VT, FF). */
const LINE_BREAKS = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
const HTML_LINE_BREAKS = /[\r\v\f\u0085\u2028\u2029]/g;

/** Text or attribute value for HTML: `<script>` becomes visible text, never markup; CR, NEL, LS, PS, VT and FF become character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]).replace(HTML_LINE_BREAKS, (c) => `&#${c.charCodeAt(0)};`);
}

/** Text on one line: every line break (CRLF, CR, LF, NEL, LS, PS, VT, FF) a space. Markup is kept. */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAKS, ' ');
}

/** Inline Markdown text: punctuation that could start markup is backslash-escaped, lines joined. */
export function escapeMarkdown(text: string): string {
  return oneLine(text).replace(/[\\`*_[\]<>|#&!~]/g, (c) => `\\${c}`);
}

/** Inline code in Markdown (safe inside a table cell): a backtick fence longer than any run inside. */
export function markdownCode(text: string): string {
  const flat = oneLine(text).replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block whose fence is longer than any backtick run in the content. */
export function markdownFence(content: string, language = ''): string {
  const longest = Math.max(0, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${content}\n${fence}`;
}

/** A slug for anchors and file names: lowercase letters, digits and dashes only. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * A plain-words line without raw machine identifiers: a 64-bit block hash becomes its first and
 * last four digits ("block 1629…5538"), a SHA-256 digest its first twelve hex digits.
 */
export function plainWords(text: string): string {
  return text.replace(/sha256:([0-9a-f]{12})[0-9a-f]{52}/g, 'sha256:$1…').replace(/\b(\d{4})\d{5,}(\d{4})\b/g, '$1…$2');
}
