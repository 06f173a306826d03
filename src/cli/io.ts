// What every kvqual subcommand shares: the exit-code contract, the I/O it is given (so tests can
// run a command without a process), and JSON output in which 64-bit values stay exact.
import * as fs from 'node:fs';

/** 0 clean, 1 a rule violation found, 2 usage error / unreadable file / malformed input, 3 a kvqual bug. */
export const ExitCode = { clean: 0, violation: 1, usage: 2, internal: 3 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readText(path: string): string;
  /** Writes a whole file atomically (temp file in the same folder, then rename): never half-written. */
  writeTextAtomic(path: string, text: string): void;
}

/** The real process: standard streams and the file system. */
export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readText: (path) => fs.readFileSync(path, 'utf8'),
  writeTextAtomic: (path, text) => {
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, text);
      fs.renameSync(temporary, path);
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  },
};

/** Pretty JSON with bigints (u64 hashes, ns timestamps) as decimal strings, never rounded. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item), 2)}\n`;
}
