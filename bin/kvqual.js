#!/usr/bin/env node
// The kvqual executable: loads the TypeScript sources through tsx and runs the command line.
// Exit codes: 0 clean, 1 a rule violation found, 2 usage / unreadable file / malformed input,
// 3 an unexpected error inside kvqual (a bug: its stack is printed).
'use strict';
require('tsx/cjs');
const { runCli } = require('../src/cli/main.ts');
const { processIo, ExitCode } = require('../src/cli/io.ts');

try {
  process.exitCode = runCli(process.argv.slice(2), processIo);
} catch (error) {
  process.stderr.write(`kvqual: internal error (please report): ${error && error.stack ? error.stack : error}\n`);
  process.exitCode = ExitCode.internal;
}
