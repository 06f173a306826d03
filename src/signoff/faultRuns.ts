// The processes of the planted-fault check (scripts/fault-check.ts, one process for every fault) and
// of the order-independence proof (one cucumber process per scenario replayed alone); what they
// decide is in faults.ts and isolation.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FaultCheck } from './faults';
import { type AloneRun } from './isolation';
import type { DriverContext } from './context';
import { readRun } from './runStreams';
import { spawn, tool } from './spawn';

/** One scenario replayed alone: a quiet cucumber process of its own (its replay command), its stream written to a folder of its own and read back. */
export function aloneRun(ctx: DriverContext, env: NodeJS.ProcessEnv, beside: boolean): AloneRun {
  return async ({ uri, line }) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-alone-'));
    try {
      const messages = path.join(dir, 'messages.ndjson');
      await spawn(ctx, tool(ctx, 'cucumber-js'), ['--profile', 'replay', `${uri}:${line}`, '--format', `message:${messages}`], env, true, beside);
      return readRun(messages);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

/**
 * The planted-fault check (faults.ts) of what passed in run 1's stream, in one process of its own
 * (scripts/fault-check.ts: the steps loaded once, one cucumber run per fault); what kept it from
 * completing is a problem of the check.
 */
export async function runFaultCheck(ctx: DriverContext, env: NodeJS.ProcessEnv, firstMessages: string, beside: boolean): Promise<FaultCheck> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-faults-'));
  try {
    const out = path.join(dir, 'faults.json');
    const done = await spawn(ctx, process.execPath, ['--require', 'tsx/cjs', path.join('scripts', 'fault-check.ts'), firstMessages, out], env, true, beside);
    if (done.status === 0 && fs.existsSync(out)) return JSON.parse(fs.readFileSync(out, 'utf8')) as FaultCheck;
    const why = `scripts/fault-check.ts exited with status ${done.status}: ${done.output.split('\n').filter(Boolean).slice(-3).join(' / ')}`;
    return { trials: [], survivors: [], exempt: [], problems: [why] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
