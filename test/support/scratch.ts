// Scratch folders for tests, removed by the test that made them: a folder kvqual-<name>-XXXXXX in
// the system's temporary folder, deleted when the test ends (given its context) or when the file's
// tests end (without one), pass or fail.
import { after, type TestContext } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh folder in the system's temporary folder, removed after `t` (or after the file's tests). */
export function scratchFolder(name: string, t?: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `kvqual-${name}-`));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  if (t === undefined) after(remove);
  else t.after(remove);
  return dir;
}
