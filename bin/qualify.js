#!/usr/bin/env node
// `npm run qualify`: the sign-off (scripts/qualify.ts), from its compiled bundle in build/qualify/
// when that build is current (bin/compiled.js: `npm ci` and `npm run build` make it; a source of
// it changed since makes it stale, and a stale build never runs), else from the TypeScript through
// tsx; the same code either way, the compiled one starting on about half a second less CPU.
// KVQUAL_TSX=1 runs the TypeScript through tsx even then. Its options and exit status are
// scripts/qualify.ts's.
'use strict';
const { loadQualify } = require('./compiled.js');

loadQualify()
  .runQualify(process.argv.slice(2))
  .then((code) => process.exit(code));
