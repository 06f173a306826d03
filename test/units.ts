// The unit test files of one folder in this one process, each file a suite named by its path, in
// name order: one Node start and one load of src/ for all of them, where `node --test` starts a
// process per file (about 45 % less CPU for test/unit, under tsx and under coverage alike).
// `npm test` runs it beside the integration test files; the sign-off's coverage run runs its
// compiled copy (build/test/units.js) on build/test/unit.
//
//   node --require tsx/cjs --test-reporter=tap test/units.ts [FOLDER]
//
// FOLDER defaults to unit/ beside this file; its files are those ending in .test.ts through tsx or
// .test.js compiled (this file's own extension). A file that throws while it loads fails a test
// "the file loads" in its suite with that error, and the other files still run.
import { describe, test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';

/** The test files of `folder` with this module's extension, in name order. */
function unitTestFiles(folder: string, extension: string): string[] {
  if (!fs.existsSync(folder)) throw new Error(`units: no such folder ${folder}`);
  return fs
    .readdirSync(folder)
    .filter((name) => name.endsWith(`.test${extension}`))
    .sort()
    .map((name) => path.join(folder, name));
}

function main(argv: string[]): void {
  const extension = path.extname(__filename);
  const folder = path.resolve(argv[0] ?? path.join(__dirname, 'unit'));
  const files = unitTestFiles(folder, extension);
  if (files.length === 0) throw new Error(`units: no *.test${extension} file in ${folder}`);
  const root = process.cwd();
  for (const file of files) {
    describe(path.relative(root, file).split(path.sep).join('/'), () => {
      try {
        require(file);
      } catch (error) {
        // As a failed test, so that it is counted among the failures (a failed suite is not).
        test('the file loads', () => {
          throw error;
        });
      }
    });
  }
}

if (require.main === module) main(process.argv.slice(2));
