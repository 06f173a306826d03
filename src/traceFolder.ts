// Where the published Mooncake traces are for the scenarios and tests that replay them: the folder
// KVQUAL_TRACES names, else ../shared/data/mooncake beside the checkout (as the README says).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The environment variable that names the folder holding conversation_trace.jsonl and synthetic_trace.jsonl. */
export const TRACES_VARIABLE = 'KVQUAL_TRACES';

/** The checkout a file lies in: the nearest folder above it with a package.json (compiled steps run from build/steps/). */
export function checkoutOf(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The folder of the published traces for a checkout at `root` (it may not exist: see traceFile). */
export function traceFolder(root: string, environment: NodeJS.ProcessEnv = process.env): string {
  const named = environment[TRACES_VARIABLE];
  return named !== undefined && named !== '' ? path.resolve(named) : path.resolve(root, '..', 'shared', 'data', 'mooncake');
}

/** A published trace file, or an error saying where it was looked for and how to point elsewhere. */
export function traceFile(root: string, name: string, environment: NodeJS.ProcessEnv = process.env): string {
  const file = path.join(traceFolder(root, environment), name);
  if (!fs.existsSync(file)) throw new Error(`the trace ${name} is not at ${file}; put the published Mooncake traces in ../shared/data/mooncake beside the checkout, or name their folder in ${TRACES_VARIABLE}`);
  return file;
}
