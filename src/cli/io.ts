// What every kvqual subcommand shares: the exit-code contract, the I/O it is given (so tests can
// run a command without a process), and JSON output in which 64-bit values stay exact.

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

/** The real process: standard streams (terminal-safe) and the working folder. */
export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(terminalSafe(text)),
  stderr: (text) => void process.stderr.write(terminalSafe(text)),
  get cwd() {
    return process.cwd();
  },
  get stderrIsTty() {
    return process.stderr.isTTY === true;
  },
};

/** Pretty JSON with bigints (u64 hashes, ns timestamps) as decimal strings, never rounded. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item), 2)}\n`;
}
