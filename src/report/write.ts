// Atomic output: a report file is written to a temporary file in the same directory, flushed,
// then renamed over the old one, so a reader (or a crash) never sees it half-written (the fuzzer's
// counterexamples; the sign-off publishes its whole set with src/signoff/write.ts).
import fs from 'node:fs';
import path from 'node:path';

function tempName(target: string, tag: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${tag}-${process.pid}`);
}

/** Writes a file atomically (temp file in the same directory, fsync, rename). */
export function writeFileAtomic(file: string, content: string | Buffer): void {
  const temp = tempName(file, 'tmp');
  try {
    const fd = fs.openSync(temp, 'w');
    try {
      fs.writeFileSync(fd, content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
