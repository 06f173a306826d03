// Where the repository is, for tests that read fixtures: found by walking up to package.json, so
// the same test works from test/ (through tsx) and from build/test/ (compiled, under coverage).
import fs from 'node:fs';
import path from 'node:path';

function findRoot(start: string): string {
  let dir = start;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

export const ROOT = findRoot(__dirname);
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');
