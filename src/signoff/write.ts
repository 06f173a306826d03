// Atomic output: a report file is written to a temporary file in the same directory, flushed,
// then renamed over the old one, so a reader (or a crash) never sees it half-written. A directory
// of assets is built beside its final place and swapped in with renames.
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

/** Replaces a directory with one holding exactly `files`, built aside and swapped in by rename. */
export function replaceDirAtomic(dir: string, files: { name: string; content: string | Buffer }[]): void {
  const staging = tempName(dir, 'new');
  const previous = tempName(dir, 'old');
  fs.rmSync(staging, { recursive: true, force: true });
  fs.rmSync(previous, { recursive: true, force: true });
  try {
    fs.mkdirSync(staging, { recursive: true });
    for (const file of files) {
      if (file.name.includes('/') || file.name.startsWith('.')) throw new Error(`asset name "${file.name}" must be a plain file name`);
      fs.writeFileSync(path.join(staging, file.name), file.content);
    }
    if (fs.existsSync(dir)) fs.renameSync(dir, previous);
    fs.renameSync(staging, dir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(previous, { recursive: true, force: true });
  }
}
