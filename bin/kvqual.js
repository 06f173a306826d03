#!/usr/bin/env node
// The kvqual executable: runs the command line from the JavaScript compiled into build/cli/ when that
// build is current (bin/compiled.js: `npm ci` and `npm run build` make it; a source changed since
// makes it stale, and a stale build never runs), else from the TypeScript sources through tsx; the
// same code either way, the compiled one starting faster. KVQUAL_TSX=1 runs the TypeScript through
// tsx even then (for tests of that path). KVQUAL_BUILD=<dir> runs the JavaScript compiled into <dir>
// (by esbuild) instead (the sign-off's coverage run sets it, so the command-line tests measure
// build/src/cli/).
// Exit codes: 0 clean, 1 a rule violation found, 2 usage / unreadable file / malformed input,
// 3 an unexpected error inside kvqual (a bug: its stack is printed).
'use strict';
const path = require('node:path');

/**
 * Whether tsx can keep its transform cache where it will (a folder `tsx-<uid>` in the temporary
 * folder). It creates that folder at the first compile and does not survive failing to: a TMPDIR
 * that is read-only, a file, or missing under a read-only parent gave Node's stack and exit 1 (a
 * "rule violation"), and TMPDIR=/proc made it spin for ever. Without the cache kvqual compiles in
 * memory (slower to start, the same results). Checked without a recursive mkdir, which is what spins.
 */
function tsxCacheUsable() {
  const fs = require('node:fs');
  const os = require('node:os');
  const user = process.geteuid ? process.geteuid() : os.userInfo().username;
  const folder = path.join(os.tmpdir(), `tsx-${user}`);
  try {
    if (!fs.statSync(os.tmpdir()).isDirectory()) return false;
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      if (!error || error.code !== 'EEXIST') return false;
    }
    if (!fs.statSync(folder).isDirectory()) return false;
    fs.accessSync(folder, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// A working folder removed under the shell: tsx (and every relative path) asks for it at once, and
// the answer was Node's stack and exit 1. Said in one line, exit 2, before anything loads.
try {
  process.cwd();
} catch (error) {
  process.stderr.write(`kvqual: the working folder cannot be read (${error && error.code === 'ENOENT' ? 'it was removed' : error && error.code}); change to an existing folder\n`);
  process.exit(2);
}

const build = process.env.KVQUAL_BUILD;
const compiled = build ? path.resolve(__dirname, '..', build, 'src', 'cli') : process.env.KVQUAL_TSX === '1' ? null : require('./compiled.js').currentBuild();
/** The command line's main module: the compiled bundle, a compiled src/cli/main.js (KVQUAL_BUILD), or the TypeScript. */
let cli;
/** Whether the TypeScript loader is in place (`kvqual qualify` needs it when the sign-off's build, build/qualify/, is not current). */
let tsxLoaded = false;
function loadTsx() {
  if (tsxLoaded) return;
  if (!tsxCacheUsable()) process.env.TSX_DISABLE_CACHE = '1';
  require('tsx/cjs');
  tsxLoaded = true;
}
if (compiled !== null) {
  // A stack printed for an internal error names the TypeScript lines (esbuild's source maps), as under tsx.
  if (!build) process.setSourceMapsEnabled(true);
  cli = require(path.join(compiled, 'main.js'));
} else {
  loadTsx();
  cli = require('../src/cli/main.ts');
}
const { runCliAsync, processIo, statusAfterOutput, ExitCode } = cli;

const { replayProgress } = require('./progress.js');

const { performance } = require('node:perf_hooks');

// Standard output and error are guarded (src/cli/io.ts): a reader that stops early (`kvqual replay …
// --json | head`) or a full disk (`> report.json`) no longer kills the command with Node's stack and
// exit 1 (kvqual's status for a rule violation); it finishes its work, and a standard output it
// could not write makes the status 2.
// The clock is read here, never under src/: progress bars and reported wall times only.
// `kvqual qualify` is `npm run qualify` (scripts/qualify.ts, loaded only for it: it brings cucumber's
// report formatters); it writes to the process's own streams, its status is the verdict's, and
// the process exits once it is done, as `npm run qualify` does (nothing it started keeps it alive).
let qualifyRan = false;
const qualify = (args) => {
  qualifyRan = true;
  // Its compiled bundle when current, else the TypeScript (bin/compiled.js).
  return require('./compiled.js').loadQualify(loadTsx).runQualify(args);
};
const io = Object.assign(processIo(), { progress: replayProgress, wallMs: () => performance.now(), qualify });
runCliAsync(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = statusAfterOutput(io, code, 'kvqual');
    if (qualifyRan) process.exit();
  },
  (error) => {
    io.err.write(`kvqual: internal error (please report): ${error && error.stack ? error.stack : error}\n`);
    process.exitCode = ExitCode.internal;
  },
);
