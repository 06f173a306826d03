// The files a command writes (`replay --out`, `--events-out`): every path is checked before any
// work starts (its folder exists and is writable, it is not a folder, a device or an input), and
// all of them are written as temporary files in their own folders and renamed into place only when
// every one was written, so a failed run leaves nothing behind and a reader never sees half a file
// (a run killed meanwhile leaves its temporary files, which the next run of those outputs removes).
import { reason } from '../inputFiles';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ownerGone, ownerTag } from '../processes';

/** A problem with an output path or with writing it; the message is complete. */
export class OutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputError';
  }
}

/** An output a command was asked for: the option that named it and the path as given. */
export interface OutputRequest {
  option: string;
  file: string;
}

/** An output whose path passed the checks. */
export interface PlannedOutput extends OutputRequest {
  absolute: string;
}

function code(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/** Why an output could not be written, in words: a missing file while writing means its folder takes no new file (as /proc). */
function writeReason(error: unknown): string {
  return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'its folder takes no new file' : reason(error);
}

function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const [x, y] = [fs.statSync(a), fs.statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * Checks each requested output before the run: its folder exists and can be written, it is not
 * a folder or anything but a regular file, it is not one of `inputs` (absolute paths, with what
 * they are), and no two outputs are the same file. Throws OutputError naming the option.
 */
export function planOutputs(requests: readonly OutputRequest[], cwd: string, inputs: readonly { absolute: string; what: string }[]): PlannedOutput[] {
  const planned: PlannedOutput[] = [];
  for (const { option, file } of requests) {
    const fail = (problem: string): never => {
      throw new OutputError(`${option} ${file}: ${problem}`);
    };
    if (file === '') fail('give a file name');
    // "-" means standard output to most tools: written as a file of that name, it surprised.
    if (file === '-') fail('names standard output, which kvqual does not write to this way (--json prints the report there); give a file name, or ./- for a file of that name');
    if (/[\\/]$/.test(file)) fail('names a folder; give a file name');
    const absolute = throughLink(path.resolve(cwd, file));
    const folder = path.dirname(absolute);
    let folderStats: fs.Stats;
    try {
      folderStats = fs.statSync(folder);
    } catch (error) {
      const reason = code(error) === 'ENOENT' ? 'does not exist' : `cannot be used (${code(error)})`;
      return fail(`the folder ${path.dirname(file) || '.'} ${reason}; create it first`);
    }
    if (!folderStats.isDirectory()) fail(`${path.dirname(file)} is not a folder`);
    try {
      fs.accessSync(folder, fs.constants.W_OK);
    } catch {
      fail(`cannot write in the folder ${path.dirname(file) || '.'} (permission denied)`);
    }
    let stats: fs.Stats | null = null;
    try {
      stats = fs.statSync(absolute);
    } catch (error) {
      if (code(error) !== 'ENOENT') fail(`cannot be used (${code(error)})`);
    }
    if (stats?.isDirectory()) fail('is a folder; give a file name');
    if (stats && !stats.isFile()) fail('exists and is not a regular file (a device, FIFO or socket); give a file name');
    for (const input of inputs) if (sameFile(absolute, input.absolute)) fail(`is the ${input.what}; writing it would overwrite an input`);
    for (const other of planned) if (sameFile(absolute, other.absolute)) fail(`is also given to ${other.option}; give two different files`);
    planned.push({ option, file, absolute });
  }
  for (const output of planned) clearStaleTemporaries(output.absolute);
  return planned;
}

/**
 * The file an output path names: a symbolic link's target (followed as writing through it would
 * be; a dangling link's target as the link names it). The output is written there and the link
 * stays: written beside the link and renamed over it, the link became a file and its target was
 * left stale, while the check that two outputs differ followed the link (found by an outside audit).
 */
function throughLink(absolute: string): string {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(absolute);
  } catch {
    return absolute;
  }
  if (!stats.isSymbolicLink()) return absolute;
  try {
    return fs.realpathSync(absolute);
  } catch {
    try {
      return path.resolve(path.dirname(absolute), fs.readlinkSync(absolute));
    } catch {
      return absolute;
    }
  }
}

/** A temporary file of `absolute` (see temporaryName): the owner text of the process that wrote it (see ownerTag). */
function temporaryOf(absolute: string, name: string): string | null {
  const prefix = `.${path.basename(absolute)}.kvqual-`;
  if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return null;
  return name.slice(prefix.length, -'.tmp'.length);
}

/**
 * Removes the temporary files of an output that a killed run left (a replay stopped by Ctrl-C or a
 * signal cannot tidy up: its work does not yield to a handler). Only those of processes that are
 * gone: a run still writing beside this one keeps its own, and so does one of another pid namespace
 * (a container sharing the folder), which cannot be told from a dead one.
 */
function clearStaleTemporaries(absolute: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(absolute));
  } catch {
    return;
  }
  for (const name of names.sort()) {
    const owner = temporaryOf(absolute, name);
    if (owner !== null && ownerGone(owner)) fs.rmSync(path.join(path.dirname(absolute), name), { force: true });
  }
}

/**
 * Writes all of `text` at the file's position. fs.writeSync writes once and may write less than it
 * was given (a disk that fills up mid-write returns the bytes that fitted, with no error): the rest
 * is written again until it is all there, and a write that makes no progress fails with ENOSPC.
 */
export function writeFully(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; ) {
    const wrote = fs.writeSync(fd, bytes, offset, bytes.length - offset);
    if (wrote <= 0) throw Object.assign(new Error('no space left: a write made no progress'), { code: 'ENOSPC' });
    offset += wrote;
  }
}

function temporaryName(absolute: string): string {
  return path.join(path.dirname(absolute), `.${path.basename(absolute)}.kvqual-${ownerTag()}.tmp`);
}

/**
 * An output written while the run goes on (the event log, as batches are delivered): a temporary
 * file beside the output, put in place by writeOutputs with the others, or removed (discard) when
 * the run does not get that far. Appends are buffered.
 */
export class SpooledOutput {
  readonly temporary: string;
  private fd: number | null;
  private buffered = '';

  constructor(readonly output: PlannedOutput) {
    this.temporary = temporaryName(output.absolute);
    try {
      this.fd = fs.openSync(this.temporary, 'wx');
    } catch (error) {
      throw new OutputError(`${output.option} ${output.file}: cannot write it (${writeReason(error)}); nothing was written`);
    }
  }

  append(text: string): void {
    this.buffered += text;
    if (this.buffered.length >= 1 << 16) this.flush();
  }

  /** Writes what is buffered, syncs and closes the file (before it is put in place). */
  finish(): void {
    if (this.fd === null) return;
    this.flush();
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
    this.fd = null;
  }

  /** Closes and removes the file (the run or another output failed). */
  discard(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    fs.rmSync(this.temporary, { force: true });
  }

  private flush(): void {
    if (this.buffered === '' || this.fd === null) return;
    try {
      writeFully(this.fd, this.buffered);
    } catch (error) {
      throw new OutputError(`${this.output.option} ${this.output.file}: cannot write it (${writeReason(error)}); nothing was written`);
    }
    this.buffered = '';
  }
}

/**
 * Writes every output: first each to a temporary file beside it (any failure removes them all and
 * throws OutputError), then renames them into place. A spooled output is already in its
 * temporary file and only put in place (or removed with the others).
 */
export function writeOutputs(outputs: readonly { output: PlannedOutput; text?: string; write?: (sink: (text: string) => void) => void; spooled?: SpooledOutput }[]): void {
  const written: string[] = [];
  try {
    for (const { output, text, write, spooled } of outputs) {
      if (spooled) {
        written.push(spooled.temporary);
        try {
          spooled.finish();
        } catch (error) {
          if (error instanceof OutputError) throw error;
          throw new OutputError(`${output.option} ${output.file}: cannot write it (${writeReason(error)}); nothing was written`);
        }
        continue;
      }
      const temporary = temporaryName(output.absolute);
      try {
        const fd = fs.openSync(temporary, 'wx');
        written.push(temporary);
        try {
          // A large output is streamed to the file piece by piece, never built as one string.
          if (write) {
            let buffered = '';
            write((piece) => {
              buffered += piece;
              if (buffered.length >= 1 << 16) {
                writeFully(fd, buffered);
                buffered = '';
              }
            });
            writeFully(fd, buffered);
          } else writeFully(fd, text ?? '');
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      } catch (error) {
        throw new OutputError(`${output.option} ${output.file}: cannot write it (${writeReason(error)}); nothing was written`);
      }
    }
    outputs.forEach(({ output }, index) => {
      try {
        fs.renameSync(written[index], output.absolute);
      } catch (error) {
        throw new OutputError(`${output.option} ${output.file}: cannot put it in place (${writeReason(error)})`);
      }
    });
  } finally {
    for (const temporary of written) fs.rmSync(temporary, { force: true });
  }
}
