// What every kvqual subcommand shares: the exit-code contract, the I/O it is given (so tests can
// run a command without a process), and JSON output in which 64-bit values stay exact.
import { reason } from '../inputFiles';

/**
 * 0 clean, 1 a rule violation found, 2 usage error / unreadable file / malformed or out-of-limit
 * input (nothing is written then), 3 a kvqual bug (an internal error; its stack is printed).
 */
export const ExitCode = { clean: 0, violation: 1, usage: 2, internal: 3 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The folder relative paths on the command line are read from (the process's working folder). */
  readonly cwd: string;
  /** Whether standard error is a terminal (a progress bar then redraws in place); absent: no. */
  readonly stderrIsTty?: boolean;
  /**
   * A progress display for a long replay (a terminal's bar), or null; given by bin/kvqual.js, which
   * may read the clock. Display only: it never changes a result.
   */
  progress?: () => ProgressDisplay | null;
  /**
   * Wall-clock milliseconds, for reporting how long work took (sweep points, a sweep's total);
   * given by bin/kvqual.js, so nothing under src/ reads the clock. Absent: wall times read 0.
   */
  wallMs?: () => number;
  /**
   * Runs the sign-off with `npm run qualify`'s arguments and resolves with its exit status (0
   * QUALIFIED, 1 NOT QUALIFIED, 2 usage or input); given by bin/kvqual.js (scripts/qualify.ts), which
   * writes to the process's own streams. Absent: `kvqual qualify` cannot run.
   */
  qualify?: (args: string[]) => Promise<number>;
}

export interface ProgressDisplay {
  update(ended: number, total: number, virtual_ms: number): void;
  stop(): void;
}

/**
 * Text for a terminal: control characters other than line breaks and tabs (an escape sequence in
 * a request id or a CSV cell could move the cursor or retitle the window) as \uXXXX. Inside a JSON
 * string that escape reads back as the same character, so `--json` stays the same JSON.
 */
export function terminalSafe(text: string): string {
  return /[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text) ? text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

/**
 * A standard stream that outlives its own failure: a reader that left (EPIPE: `kvqual … | head`)
 * or a stream that cannot be written (a full disk: `> report.json`, `>/dev/full`) is noted once and
 * later writes are skipped, so the command still finishes its work (its --out files, its verdict)
 * instead of dying of an uncaught stream error with Node's stack and exit 1, kvqual's status for
 * a rule violation.
 */
export class GuardedStream {
  /** The stream's first error other than EPIPE, if any. */
  failure: NodeJS.ErrnoException | null = null;
  /** Whether the reader went away (EPIPE): what follows is not wanted, which is not an error. */
  readerLeft = false;

  constructor(private readonly stream: NodeJS.WritableStream) {
    stream.on('error', (error: NodeJS.ErrnoException) => this.failed(error));
  }

  write(text: string): void {
    if (this.failure !== null || this.readerLeft) return;
    try {
      this.stream.write(text);
    } catch (error) {
      this.failed(error as NodeJS.ErrnoException);
    }
  }

  private failed(error: NodeJS.ErrnoException): void {
    if (error?.code === 'EPIPE') this.readerLeft = true;
    else this.failure ??= error;
  }
}

/** The command line's I/O on the real process (terminal-safe standard streams, the working folder), and what became of its output. */
export interface ProcessIo extends CliIo {
  readonly out: GuardedStream;
  readonly err: GuardedStream;
}

/** The real process's I/O; its streams are guarded from the first call on (see GuardedStream). */
export function processIo(): ProcessIo {
  const out = new GuardedStream(process.stdout);
  const err = new GuardedStream(process.stderr);
  return {
    out,
    err,
    stdout: (text) => out.write(terminalSafe(text)),
    stderr: (text) => err.write(terminalSafe(text)),
    get cwd() {
      return process.cwd();
    },
    get stderrIsTty() {
      return process.stderr.isTTY === true;
    },
  };
}

/**
 * The exit status once the command is done: a standard output that could not be written makes a
 * clean run or a violation a usage-class failure (2: what it printed is incomplete), said on
 * standard error when that still works; a reader that left changes nothing.
 */
export function statusAfterOutput(io: ProcessIo, status: number, command: string): number {
  if (io.out.failure === null) return status;
  io.err.write(`${command}: standard output: cannot write it (${reason(io.out.failure)}); what was printed is incomplete\n`);
  return status === ExitCode.internal ? status : ExitCode.usage;
}

/** Pretty JSON with bigints (u64 hashes, ns timestamps) as decimal strings, never rounded. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item), 2)}\n`;
}
