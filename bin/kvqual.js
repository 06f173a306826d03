#!/usr/bin/env node
// The kvqual executable: loads the TypeScript sources through tsx and runs the command line.
// KVQUAL_BUILD=<dir> runs the JavaScript that tsc compiled into <dir> instead (the sign-off's
// coverage run sets it, so the command-line tests measure build/src/cli/).
// Exit codes: 0 clean, 1 a rule violation found, 2 usage / unreadable file / malformed input,
// 3 an unexpected error inside kvqual (a bug: its stack is printed).
'use strict';
const path = require('node:path');

const build = process.env.KVQUAL_BUILD;
let cli;
if (build) {
  const dir = path.resolve(__dirname, '..', build, 'src', 'cli');
  cli = { main: require(path.join(dir, 'main.js')), io: require(path.join(dir, 'io.js')) };
} else {
  require('tsx/cjs');
  cli = { main: require('../src/cli/main.ts'), io: require('../src/cli/io.ts') };
}
const { runCliAsync } = cli.main;
const { processIo, ExitCode } = cli.io;

const { replayProgress } = require('./progress.js');

// A reader that stops early (`kvqual replay … --json | head`) closes the pipe: the rest of the output
// has nowhere to go, which is not an error of kvqual's. It ends quietly with the status it had.
process.stdout.on('error', (error) => {
  if (error && error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const { performance } = require('node:perf_hooks');

// The clock is read here, never under src/: progress bars and reported wall times only.
const io = { ...processIo, cwd: processIo.cwd, stderrIsTty: processIo.stderrIsTty, progress: replayProgress, wallMs: () => performance.now() };
runCliAsync(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`kvqual: internal error (please report): ${error && error.stack ? error.stack : error}\n`);
    process.exitCode = ExitCode.internal;
  },
);
