// Which code a process ran, told without touching it: a module Node preloads (`--require`, through
// NODE_OPTIONS) that, as the process exits, writes a marker to standard error when a given file was
// loaded. The compiled builds' tests ask whether a bundle ran; a bundle edited to say so would no
// longer be the build (bin/compiled.js checks each bundle against what it wrote), which they check
// by editing one for a while (whileEditedByHand).
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes into `folder` a preload module that writes `marker` and a newline to standard error as the
 * process exits if it loaded `file` (relative to `folder`, which need not exist yet); returns the
 * environment that preloads it.
 */
export function loadWatch(folder: string, file: string, marker: string): NodeJS.ProcessEnv {
  const watcher = path.join(folder, `load-watch-${path.basename(file)}.js`);
  // Node keys its module cache by real path.
  const watched = path.join(fs.realpathSync(folder), file);
  fs.writeFileSync(
    watcher,
    `'use strict';\nprocess.on('exit', () => {\n  if (Object.prototype.hasOwnProperty.call(require.cache, ${JSON.stringify(watched)})) process.stderr.write(${JSON.stringify(`${marker}\n`)});\n});\n`,
  );
  return { NODE_OPTIONS: `--require ${watcher}` };
}

/** Calls `edited` while `file` (a bundle) has a line added by hand, then writes it back as it was and calls `restored`. */
export function whileEditedByHand(file: string, edited: () => void, restored: () => void): void {
  const built = fs.readFileSync(file);
  fs.appendFileSync(file, '\nprocess.stderr.write("edited by hand\\n");\n');
  try {
    edited();
  } finally {
    fs.writeFileSync(file, built);
  }
  restored();
}
