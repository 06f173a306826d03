// The allow-list sanitiser of the figures signoff.html inlines: an SVG is read by a strict XML
// parser (saxes: a document that is not well-formed is refused) and written again from what was
// read, keeping only the elements and attributes vega writes for kvqual's figures (shapes, groups,
// clip paths and text: no <style>, <script>, <foreignObject>, <a>, <use>, <image>, animation,
// filter or mask; no event handler, style or href, and on the outer <svg> only its size, nothing
// that would let a figure paint outside its box). A value may name no URL but `url(#id)` of an
// element of the same figure, and call only colours and transforms, so no value reaches outside
// the figure. Ids are renamed
// `<prefix>-1`, `<prefix>-2`, … in order of appearance (several figures share one page), and every
// text and value is escaped again. Anything outside the list refuses the whole figure (an
// SvgRefused naming what and where): what vega draws for kvqual never holds it, so it can only
// come from a tampered or damaged source, and a reviewer is better told than shown half of it.
import { SaxesParser, type SaxesTagPlain } from 'saxes';

export const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
const XLINK_NAMESPACE = 'http://www.w3.org/1999/xlink';

/** A figure the sanitiser will not inline, with the reason. */
export class SvgRefused extends Error {
  constructor(reason: string) {
    super(`figure refused: ${reason}`);
    this.name = 'SvgRefused';
  }
}

/** Elements that draw or group a shape (what vega draws for kvqual's figures); nothing that loads, runs, styles or animates. */
const ELEMENTS = new Set(['svg', 'g', 'defs', 'clipPath', 'path', 'rect', 'line', 'text']);

/** The element whose text is kept (escaped); text elsewhere must be blank. */
const TEXT_ELEMENT = 'text';

/** Attributes of shapes inside the figure (those vega writes for kvqual's figures). */
const ATTRIBUTES = new Set([
  'id', 'd', 'x', 'y', 'x2', 'y2', 'width', 'height', 'transform', 'fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-miterlimit',
  'opacity', 'clip-path', 'display', 'pointer-events', 'font-family', 'font-size', 'font-weight', 'text-anchor', 'role', 'aria-hidden',
  'aria-label', 'aria-roledescription',
]);

/** Attributes of the outer <svg>: its size, nothing that moves or unclips it. */
const ROOT_ATTRIBUTES = new Set(['version', 'width', 'height', 'viewBox']);

/** Attributes dropped without refusing the figure: the page's CSS must not reach into a figure through them. */
const DROPPED = new Set(['class']);

/** Attributes whose value is free text (read to a screen reader, never parsed as CSS or a URL). */
const FREE_TEXT = new Set(['aria-label', 'aria-roledescription']);

/** What any other value may hold: numbers, names, colours, lists and the functions below; no backslash, colon, semicolon or angle bracket. */
const VALUE = /^[\w#.,%()\s+'"-]*$/;
const FUNCTION = /([A-Za-z-]*)\(/g;
const FUNCTIONS = new Set(['translate', 'rotate', 'scale', 'rgb', 'url']);
const LOCAL_URL = /url\(#([A-Za-z][\w.-]*)\)/g;
const ID = /^[A-Za-z][\w.-]*$/;

/**
 * The figures this process sanitised last, by their exact input: a run draws the same figure for
 * neighbouring scenarios (an outline's rows), and its output is a function of input and prefix
 * alone. Only accepted figures are kept; the oldest goes first.
 */
const recentlySanitised = new Map<string, { idPrefix: string; figure: string }>();
const RECENT_FIGURES = 16;

function remember(svg: string, idPrefix: string, figure: string): void {
  recentlySanitised.delete(svg);
  recentlySanitised.set(svg, { idPrefix, figure });
  if (recentlySanitised.size > RECENT_FIGURES) recentlySanitised.delete(recentlySanitised.keys().next().value!);
  writtenFigures.delete(figure);
  writtenFigures.set(figure, idPrefix);
  if (writtenFigures.size > WRITTEN_FIGURES) writtenFigures.delete(writtenFigures.keys().next().value!);
}

/**
 * The figures this process's sanitiser wrote lately, each with the id prefix it was written under
 * (the latest WRITTEN_FIGURES; the oldest goes first): the sign-off's page inlines such a figure as
 * written, without a second pass over what the sanitiser itself made (writtenBySanitiser).
 */
const writtenFigures = new Map<string, string>();
const WRITTEN_FIGURES = 512;

/** True when this exact figure is what this process's sanitiser wrote under `idPrefix`: sanitised already. */
export function writtenBySanitiser(figure: string, idPrefix: string): boolean {
  return writtenFigures.get(figure) === idPrefix;
}

/**
 * The figure as signoff.html may inline it: parsed, checked against the allow-lists and written
 * again with ids `<idPrefix>-N`. Throws SvgRefused when anything is outside them.
 */
export function sanitiseSvg(svg: string, idPrefix: string): string {
  const known = recentlySanitised.get(svg);
  if (known !== undefined && known.idPrefix === idPrefix) {
    remember(svg, idPrefix, known.figure);
    return known.figure;
  }
  if (!ID.test(idPrefix)) throw new SvgRefused(`id prefix "${idPrefix}" is not a plain name`);
  const figure = new FigureWriter(idPrefix);
  parse(svg, figure);
  const written = figure.finish();
  remember(svg, idPrefix, written);
  return written;
}

/** A `url(#id)` value written once every id of the figure is known: where it goes in the output and what it was. */
interface Reference {
  at: number;
  name: string;
  value: string;
}

/**
 * The figure written again as the parser reads it, in one pass: each allowed element as it opens
 * (its `>` or `/>` once it is known whether anything is inside), ids renamed in order of appearance.
 * A value naming `url(#id)` may name an id further on, so it is left a slot filled by finish().
 */
class FigureWriter {
  private readonly chunks: string[] = [];
  private pending = '';
  private readonly references: Reference[] = [];
  private readonly ids = new Map<string, string>();
  private duplicateId: string | null = null;
  /** The open elements, outermost first, and whether each has had its `>` written (it holds something). */
  private readonly names: string[] = [];
  private readonly holding: boolean[] = [];
  private elements = 0;
  private hasRoot = false;

  constructor(private readonly prefix: string) {}

  /** An element of the allow-list with its allowed attributes (in the order read); a second root refuses the figure. */
  open(name: string, attributes: Record<string, string>): void {
    const n = ++this.elements;
    const isRoot = this.names.length === 0;
    const tag = openingTag(name, isRoot, n);
    if (!isRoot) this.hold();
    this.pending += tag;
    const allowedHere = isRoot ? ROOT_ATTRIBUTES : ATTRIBUTES;
    let svgNamespace = false;
    for (const attribute in attributes) {
      const value = attributes[attribute];
      if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) {
        // Namespace declarations: on the root only, the SVG one as the default (written again by openingTag) and xlink's (dropped).
        const declared = isRoot && (attribute === 'xmlns' ? value === SVG_NAMESPACE : attribute === 'xmlns:xlink' && value === XLINK_NAMESPACE);
        if (!declared) throw new SvgRefused(`a namespace declaration ${attribute}="${value}" (element ${n})`);
        svgNamespace ||= attribute === 'xmlns';
        continue;
      }
      if (DROPPED.has(attribute)) continue;
      if (!allowedHere.has(attribute)) throw new SvgRefused(`attribute ${attribute} of <${name}> is not allowed (element ${n})`);
      checkValue(attribute, value, n);
      this.attribute(attribute, value);
    }
    if (isRoot && !svgNamespace) throw new SvgRefused(`<${name}> is not an SVG element: the root does not declare the SVG namespace`);
    if (isRoot) {
      if (this.hasRoot) throw new SvgRefused('a second root element');
      this.hasRoot = true;
    }
    this.names.push(name);
    this.holding.push(false);
  }

  /** Writes ` name="value"`, an id renamed; a value naming a URL is left a slot. */
  private attribute(name: string, value: string): void {
    if (name === 'id') {
      let renamedId = this.ids.get(value);
      if (renamedId !== undefined) this.duplicateId ??= value;
      else this.ids.set(value, (renamedId = `${this.prefix}-${this.ids.size + 1}`));
      this.pending += ` id="${renamedId}"`;
    } else if (FREE_TEXT.has(name) || !value.includes('url(')) this.pending += ` ${name}="${escapeXml(value)}"`;
    else {
      this.chunks.push(`${this.pending} ${name}="`);
      this.references.push({ at: this.chunks.length, name, value });
      this.chunks.push('');
      this.pending = '"';
    }
  }

  /** The innermost open element holds something: its `>` is written if it was not. */
  private hold(): void {
    const last = this.holding.length - 1;
    if (!this.holding[last]) {
      this.holding[last] = true;
      this.pending += '>';
    }
  }

  close(): void {
    const name = this.names.pop();
    this.pending += this.holding.pop() ? `</${name}>` : '/>';
  }

  /** Text of the document: kept (escaped) inside a text element, else it must be blank. */
  text(content: string): void {
    const depth = this.names.length;
    if (depth !== 0 && this.names[depth - 1] === TEXT_ELEMENT) {
      this.hold();
      this.pending += escapeXml(content);
    } else if (content.trim() !== '') throw new SvgRefused(`text outside a text element (after element ${this.elements})`);
  }

  /** The figure as written, its references renamed; refused when it has no root, an id twice, or a reference to no element of it. */
  finish(): string {
    if (!this.hasRoot) throw new SvgRefused('no <svg> element');
    if (this.duplicateId !== null) throw new SvgRefused(`id "${this.duplicateId}" is given twice`);
    for (const { at, name, value } of this.references) this.chunks[at] = escapeXml(renamedReferences(name, value, this.ids));
    this.chunks.push(this.pending);
    return this.chunks.join('');
  }
}

/** `<name`, and on the root the SVG namespace; SvgRefused when the element is not allowed there. `n` counts elements from 1, for messages. */
function openingTag(name: string, isRoot: boolean, n: number): string {
  if (!ELEMENTS.has(name)) throw new SvgRefused(`<${name}> is not an allowed element (element ${n})`);
  if (isRoot !== (name === 'svg')) throw new SvgRefused(isRoot ? `the root is <${name}>, not <svg>` : `a nested <svg> (element ${n})`);
  return isRoot ? `<${name} xmlns="${SVG_NAMESPACE}"` : `<${name}`;
}

/** Reads the document into the writer, or SvgRefused when it is not one well-formed <svg> of allowed parts. */
function parse(svg: string, figure: FigureWriter): void {
  // Namespaces are checked by hand (cheaper than saxes' xmlns mode): the root declares the SVG
  // namespace as the default, nothing redeclares it and no name has a prefix, so every element is SVG.
  const parser = new SaxesParser();
  parser.on('doctype', () => {
    throw new SvgRefused('a DOCTYPE');
  });
  parser.on('processinginstruction', (pi) => {
    throw new SvgRefused(`a processing instruction <?${pi.target}?>`);
  });
  parser.on('opentag', (tag) => figure.open(tag.name, (tag as SaxesTagPlain).attributes));
  parser.on('closetag', () => figure.close());
  const text = (content: string) => figure.text(content);
  parser.on('text', text);
  parser.on('cdata', text);
  parser.on('error', (error) => {
    throw new SvgRefused(`not well-formed XML: ${error.message}`);
  });
  try {
    parser.write(svg).close();
  } catch (error) {
    if (error instanceof SvgRefused) throw error;
    throw new SvgRefused(`not well-formed XML: ${(error as Error).message}`);
  }
}

/** What a value may hold without a closer look: no function, quote or anything but plain characters. */
const PLAIN_VALUE = /^[\w#.,%\s+-]*$/;

/** A value that calls only functions of the list, of plain arguments and no url (as vega's transform="translate(x,y)"): what the closer look would pass. */
const PLAIN_CALLS = /^(?:(?:translate|rotate|scale|rgb)\([\w#.,%\s+-]*\)\s*)+$/;

/** A value other than free text holds only plain characters, and functions of the list (url only as `url(#id)`). */
function checkValue(name: string, value: string, n: number): void {
  if (FREE_TEXT.has(name)) return;
  if (name === 'id' && !ID.test(value)) throw refusedValue(name, value, n, 'is not a plain name');
  if (PLAIN_VALUE.test(value) || PLAIN_CALLS.test(value)) return;
  if (!VALUE.test(value)) throw refusedValue(name, value, n, 'holds a character no drawing value needs');
  for (const [, fn] of value.matchAll(FUNCTION)) if (!FUNCTIONS.has(fn)) throw refusedValue(name, value, n, `calls ${fn || 'an unnamed function'}()`);
  if (value.replace(LOCAL_URL, '').includes('url(')) throw refusedValue(name, value, n, 'names a URL other than an element of this figure');
}

function refusedValue(name: string, value: string, n: number, why: string): SvgRefused {
  return new SvgRefused(`attribute ${name}="${value}" ${why} (element ${n})`);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const NEEDS_ESCAPE = /[&<>"'\r\u0085\u2028\u2029]/;
const escapeXml = (text: string) => (NEEDS_ESCAPE.test(text) ? text.replace(/[&<>"']/g, (c) => ESCAPES[c]).replace(/[\r\u0085\u2028\u2029]/g, (c) => `&#${c.charCodeAt(0)};`) : text);

/** A value's `url(#id)` references under the figure's new names; a reference to no element of the figure refuses it. */
function renamedReferences(name: string, value: string, ids: Map<string, string>): string {
  return value.replace(LOCAL_URL, (_, id: string) => {
    const next = ids.get(id);
    if (next === undefined) throw new SvgRefused(`attribute ${name}="${value}" names #${id}, which is no element of the figure`);
    return `url(#${next})`;
  });
}
