// Reading the files a user names (configs, traces, event logs) so that every bad input gives one
// clear message: only regular files (never a device such as /dev/zero, a FIFO or a folder), a
// size limit for whole-file reads, lines streamed with a length limit, a byte-order mark accepted
// at the start of any file, and JSON syntax errors that quote at most one printable character.
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { type Document, isCollection, isScalar, visit } from 'yaml';
import { LIMITS, limitText, MAX_HASH_ID } from './limits';
import { TraceLineError } from './traceLineError';

/** A file that cannot be read as an input: missing, not a regular file, too large. The message is complete. */
export class InputFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputFileError';
  }
}

/** One line of an input, without its line break, with its 1-based number. */
export interface SourceLine {
  text: string;
  number: number;
}

const BOM = '\uFEFF';
const CHUNK_BYTES = 1 << 20;

/** What a non-regular file is, in words. */
function kindOf(stats: fs.Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** An error of the file system in words ("permission denied"), its code when it has no words here. */
export function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a part of the path is not a folder';
  if (code === 'ELOOP') return 'too many symbolic links';
  if (code === 'ENAMETOOLONG') return 'the name is too long';
  if (code === 'EROFS') return 'a read-only file system';
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'EMFILE' || code === 'ENFILE') return 'too many open files';
  if (code === 'EAGAIN') return 'the system refused for now (a limit of processes?)';
  if (code === 'ENOMEM') return 'not enough memory';
  return code ?? (error as Error).message;
}

/**
 * Opens `file` for reading without blocking (a FIFO would otherwise wait for a writer) and checks
 * it is a regular file. Returns the descriptor and its size; throws InputFileError naming `shown`.
 */
function openRegular(file: string, shown: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new InputFileError(`cannot read ${shown}: ${reason(error)}`);
  }
  const stats = fs.fstatSync(fd);
  if (!stats.isFile()) {
    fs.closeSync(fd);
    throw new InputFileError(`cannot read ${shown}: it is ${kindOf(stats)}, not a regular file`);
  }
  // The path was resolved, which drops a trailing slash; as written it names a folder, which a file is not.
  if (/[\\/]$/.test(shown)) {
    fs.closeSync(fd);
    throw new InputFileError(`cannot read ${shown}: a part of the path is not a folder (it ends with a slash, and names a file)`);
  }
  return { fd, size: stats.size };
}

/** Checks now (before any work) that `file` is a readable regular file. */
export function checkReadable(file: string, shown: string): void {
  fs.closeSync(openRegular(file, shown).fd);
}

/** A whole small file as text (a config): a regular file of at most `maxBytes`. */
export function readTextFile(file: string, shown: string, maxBytes: number, what: string): string {
  const { fd, size } = openRegular(file, shown);
  try {
    if (size > maxBytes) {
      throw new InputFileError(`cannot read ${shown}: it is ${limitText(size)} bytes; a ${what} may be at most ${limitText(maxBytes)} bytes`);
    }
    return fs.readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof InputFileError) throw error;
    throw new InputFileError(`cannot read ${shown}: ${reason(error)}`);
  } finally {
    fs.closeSync(fd);
  }
}

function tooLong(source: string, line: number, maxChars: number): TraceLineError {
  return new TraceLineError(source, line, `the line is longer than the limit of ${limitText(maxChars)} characters`);
}

/**
 * The lines of a file, read in chunks: a regular file is checked for when this is called, lines
 * come one at a time (memory stays that of one line), and a line longer than `maxChars` is an
 * error naming its number. A byte-order mark at the start is dropped; "\r\n" ends a line too.
 */
export function fileLines(file: string, shown: string, source: string, maxChars: number = LIMITS.line_chars): Iterable<SourceLine> {
  checkReadable(file, shown);
  return {
    *[Symbol.iterator]() {
      const { fd } = openRegular(file, shown);
      try {
        const decoder = new StringDecoder('utf8');
        const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
        let pending = '';
        let number = 1;
        let first = true;
        for (;;) {
          let read: number;
          try {
            read = fs.readSync(fd, buffer, 0, CHUNK_BYTES, null);
          } catch (error) {
            throw new InputFileError(`cannot read ${shown}: ${reason(error)}`);
          }
          pending += read === 0 ? decoder.end() : decoder.write(buffer.subarray(0, read));
          if (first && pending.length > 0) {
            if (pending.startsWith(BOM)) pending = pending.slice(1);
            first = false;
          }
          let start = 0;
          for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
            const text = pending.charCodeAt(end - 1) === 13 && end > start ? pending.slice(start, end - 1) : pending.slice(start, end);
            if (text.length > maxChars) throw tooLong(source, number, maxChars);
            yield { text, number };
            number++;
            start = end + 1;
          }
          pending = pending.slice(start);
          if (pending.length > maxChars) throw tooLong(source, number, maxChars);
          if (read === 0) break;
        }
        if (pending.length > 0) yield { text: pending.endsWith('\r') ? pending.slice(0, -1) : pending, number };
      } finally {
        fs.closeSync(fd);
      }
    },
  };
}

/** The lines of a text already in memory, with the same rules as fileLines. */
export function* textLines(text: string, source: string, maxChars: number = LIMITS.line_chars): Generator<SourceLine> {
  const body = text.startsWith(BOM) ? text.slice(1) : text;
  let number = 1;
  for (const line of body.split(/\r?\n/)) {
    if (line.length > maxChars) throw tooLong(source, number, maxChars);
    yield { text: line, number };
    number++;
  }
}

/** Text made safe to print: at most `max` characters, anything outside printable ASCII as \u escapes. */
export function printable(text: string, max = 40): string {
  const short = text.length > max ? `${text.slice(0, max)}…` : text;
  return short.replace(/[^\x20-\x7e…]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A JSON value named in a message: strings quoted and shortened, numbers as they read, containers by kind. */
export function describeJsonValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (typeof value === 'string') return `"${printable(value)}"`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' || isLosslessNumber(value)) return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return 'an object';
}

/**
 * Why `text` is not valid JSON, without quoting it: "JSON value expected but got 'r' at column 1".
 * (JSON.parse's own message quotes the start of the line, which may be any file's content.)
 */
export function jsonSyntaxProblem(text: string): string {
  try {
    parseLossless(text);
  } catch (error) {
    if (error instanceof RangeError) return 'the JSON is nested too deeply to read';
    const duplicate = duplicateKeyProblem(error);
    if (duplicate !== null) return duplicate;
    const message = (error as Error).message.replace(/ at position (\d+)$/, (_m, position: string) => ` at column ${Number(position) + 1}`);
    return `not valid JSON: ${message.replace(/'([^']*)'/g, (_m, quoted: string) => `'${printable(quoted, 8)}'`)}`;
  }
  return 'not valid JSON';
}

/** lossless-json's refusal of a key given twice in one object, as this project says it; null for any other error. */
function duplicateKeyProblem(error: unknown): string | null {
  const duplicate = /^Duplicate key '(.*)' encountered/.exec((error as Error).message);
  return duplicate ? `the key "${printable(duplicate[1])}" appears twice on the line: give each field once` : null;
}

/** How many keys the objects in a parsed JSON value have, at every depth. */
function keyCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) count += keyCount(item);
    return count;
  }
  for (const key in value) count += 1 + keyCount((value as Record<string, unknown>)[key]);
  return count;
}

/** A string followed by a colon: a key (or, rarely, an escaped quote and a colon inside a string). */
const KEY_TOKEN = /"\s*:/g;

/**
 * Parses one line of JSON; a syntax error becomes a TraceLineError that quotes at most a character.
 * JSON.parse keeps the last of two equal keys in an object without a word; such a line is
 * ambiguous and is refused, naming the key. The check is cheap: a line's key tokens are counted
 * and compared with the keys the parsed value has; only when they differ (a key given twice, or a
 * string that holds an escaped quote before a colon) is the line read again by lossless-json,
 * which tells the two apart.
 */
export function parseJsonLine(line: SourceLine, source: string, ErrorType: typeof TraceLineError = TraceLineError): unknown {
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch {
    throw new ErrorType(source, line.number, jsonSyntaxProblem(line.text));
  }
  if ((line.text.match(KEY_TOKEN)?.length ?? 0) !== keyCount(value)) {
    try {
      parseLossless(line.text);
    } catch (error) {
      const duplicate = duplicateKeyProblem(error);
      if (duplicate !== null) throw new ErrorType(source, line.number, duplicate);
    }
  }
  return value;
}

/**
 * The value at `path` in a line of JSON with its numbers kept exactly as written (lossless-json), or
 * why it cannot be read so. JSON.parse keeps the last of two equal keys in an object, where
 * lossless-json refuses them: such a line is ambiguous, and is refused here, naming the key.
 */
function exactJsonAt(text: string, path: readonly (string | number)[]): { value: unknown } | { problem: string } {
  let value: unknown;
  try {
    value = parseLossless(text);
  } catch (error) {
    return { problem: duplicateKeyProblem(error) ?? `its numbers could not be read exactly: ${(error as Error).message}` };
  }
  for (const key of path) value = (value as Record<string | number, unknown>)[key];
  return { value };
}

/** The largest decimal exponent an exactly read integer may carry: 10^40 is far above any 64-bit id. */
const EXACT_EXPONENT_LIMIT = 40;

/**
 * The integer a JSON number literal writes ("18446744073709551615", "5.0", "1.5e3"), exactly; null
 * when it is not a whole number. One whose exponent alone puts it far beyond any 64-bit value
 * ("1e999") is given as ±10^41, so that no huge power is computed.
 */
function exactInteger(literal: string): bigint | null {
  const parts = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!parts) return null;
  const [, sign, whole, fraction = '', exponentText = '0'] = parts;
  let digits = (whole + fraction).replace(/^0+(?=\d)/, '');
  let exponent = Number(exponentText) - fraction.length;
  while (exponent < 0 && digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent++;
  }
  if (/^0+$/.test(digits)) return 0n;
  if (exponent < 0) return null;
  if (exponent + digits.length > EXACT_EXPONENT_LIMIT) return (sign ? -1n : 1n) * 10n ** BigInt(EXACT_EXPONENT_LIMIT + 1);
  return (sign ? -1n : 1n) * BigInt(digits) * 10n ** BigInt(exponent);
}

/**
 * The items of the list at `path` in a line of JSON as exact integers (null for an item that is not
 * a whole number) and as written, or why the line cannot be read exactly.
 */
export function exactJsonIntegers(text: string, path: readonly (string | number)[]): { integers: (bigint | null)[]; written: string[] } | { problem: string } {
  const read = exactJsonAt(text, path);
  if ('problem' in read) return read;
  const items = read.value as unknown[];
  return { integers: items.map((item) => (isLosslessNumber(item) ? exactInteger(item.value) : null)), written: items.map((item) => (isLosslessNumber(item) ? item.value : describeJsonValue(item))) };
}

/**
 * Where a YAML document uses a list or a map as a key (`? [a, b]: 1`, `{a: 1}: 2`), which no kvqual
 * file has and the YAML library would turn into text with a warning on the console: the line and
 * column of the first, 1-based, or null.
 */
export function collectionKeyAt(document: Document, text: string): { line: number; column: number } | null {
  return keyAt(document, text, (key) => isCollection(key));
}

/**
 * Where the document's first YAML merge key (a plain `<<`, YAML 1.1's "merge the mapping in") is:
 * kvqual reads YAML 1.2, where `<<` is just a key, so every field it would have merged was reported
 * missing and `<<` unknown, a wall of errors far from the cause.
 */
export function mergeKeyAt(document: Document, text: string): { line: number; column: number } | null {
  return keyAt(document, text, (key) => isScalar(key) && key.value === '<<' && key.type === 'PLAIN');
}

/** Line and column of the first key of a pair that `matches`, or null. */
function keyAt(document: Document, text: string, matches: (key: unknown) => boolean): { line: number; column: number } | null {
  let found: number | null = null;
  visit(document, {
    Pair(_, pair) {
      if (found === null && matches(pair.key)) {
        found = (pair.key as { range?: [number, number, number] }).range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (found === null) return null;
  const before = text.slice(0, found);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: found - lineStart + 1 };
}

/** Why `value` is not a whole number from `min` to `max` (`unit` names what it counts), or null. */
export function wholeProblem(field: string, value: unknown, min: number, max: number, unit = ''): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) return `${field} must be a whole number ≥ ${min}, got ${describeJsonValue(value)}`;
  if (value > max) return `${field}: ${value} is above the limit of ${limitText(max)}${unit ? ` ${unit}` : ''}`;
  return null;
}

/**
 * Why a row's hash_ids are not a list of whole numbers from 0 to 2^53 − 1, or null. An id above
 * that is quoted exactly as written (JSON.parse rounds it, so two such ids could collapse into one).
 */
export function hashIdsProblem(value: unknown, line: SourceLine): string | null {
  if (!Array.isArray(value)) return `hash_ids must be a list of whole numbers ≥ 0, got ${describeJsonValue(value)}`;
  for (let i = 0; i < value.length; i++) {
    const id: unknown = value[i];
    if (typeof id === 'number' && Number.isInteger(id) && id > MAX_HASH_ID) {
      const exact = exactJsonAt(line.text, ['hash_ids', i]);
      if ('problem' in exact) return exact.problem;
      return `hash_ids[${i}]: ${String(exact.value)} is above 2^53 − 1 (${MAX_HASH_ID}), the largest hash id kvqual keeps exact`;
    }
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) return `hash_ids[${i}] must be a whole number ≥ 0, got ${describeJsonValue(id)}`;
  }
  return null;
}
