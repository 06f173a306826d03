// `npm run typecheck`, and the type-check phase of `npm test`: tsc over tsconfig.json's files in its
// build mode (src/signoff/typeCheck.ts), which does nothing when no file changed since a check that
// passed. Its record is the sign-off's (build/typecheck): when the sign-off's coverage run checks at
// the same time, one waits for the other (typeCheckInTurn) and then finds nothing to do. Prints what
// tsc prints; exits with tsc's status.
//
//   node --require tsx/cjs scripts/typecheck.ts      (npm run typecheck)
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { typeCheckInTurn } from '../src/signoff/typeCheck';

const ROOT = path.resolve(__dirname, '..');

async function main(): Promise<number> {
  const result = await typeCheckInTurn(ROOT, path.join(ROOT, 'build', 'typecheck'), (plan) => spawnSync(plan.command, plan.args, { cwd: ROOT, stdio: 'inherit' }));
  if (result.error) {
    process.stderr.write(`typecheck: could not run tsc: ${result.error.message}\n`);
    return 2;
  }
  return result.status ?? 2;
}

main().then((status) => process.exit(status));
