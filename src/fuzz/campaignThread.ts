// A fuzz campaign on a worker thread of its own, so `npm run qualify` can check the generated
// workloads while the feature runs use the other core: the same runFuzzCampaign, the same
// options (without the per-case callback), the same result, posted back when it ends. The thread
// loads this file, or its bundle (campaignBundle), and runs the campaign it is given in workerData.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { runFuzzCampaign, type CampaignOptions, type CampaignResult } from './campaign';

type ThreadOptions = Omit<CampaignOptions, 'onCase'>;

interface ThreadJob {
  kvqualFuzzCampaign: ThreadOptions;
}

type ThreadReply = { result: CampaignResult } | { error: string };

/** Packages the campaign never loads (loaded lazily elsewhere, or tools): left out of the bundle. */
const NOT_BUNDLED = ['esbuild', 'tsx', 'vega', 'vega-lite', 'cli-progress', 'c8', 'playwright-core', '@cucumber/*'];

/**
 * This file and all it imports (the simulator, the generator, the packages) as one JavaScript file
 * made by esbuild in a new temporary folder, for the thread to load instead of the TypeScript: the
 * same code, on about a sixth less CPU than through tsx (no transform at load, and an imported
 * binding read directly rather than through a getter per read). Null when this already is
 * JavaScript, or esbuild cannot make it (the thread then loads this file). `remove` deletes the folder.
 */
export async function campaignBundle(): Promise<{ file: string; remove(): void } | null> {
  if (!__filename.endsWith('.ts')) return null;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-fuzz-bundle-'));
  const remove = () => fs.rmSync(folder, { recursive: true, force: true });
  try {
    const esbuild = require('esbuild') as typeof import('esbuild');
    const file = path.join(folder, 'campaignThread.js');
    await esbuild.build({ entryPoints: [__filename], outfile: file, bundle: true, external: NOT_BUNDLED, format: 'cjs', platform: 'node', target: 'node20', logLevel: 'silent' });
    return { file, remove };
  } catch {
    remove();
    return null;
  }
}

/**
 * Runs a campaign on a new worker thread, from `file` (this module, or its bundle: campaignBundle);
 * resolves with exactly what runFuzzCampaign returns there.
 */
export function runFuzzCampaignOnThread(options: ThreadOptions, file = __filename): Promise<CampaignResult> {
  const code = file.endsWith('.ts') ? `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(file)});` : `require(${JSON.stringify(file)});`;
  const job: ThreadJob = { kvqualFuzzCampaign: { ...options, exclude: [...options.exclude], ...(options.only ? { only: [...options.only] } : {}) } };
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: job });
    let settled = false;
    worker.once('message', (reply: ThreadReply) => {
      settled = true;
      void worker.terminate();
      if ('result' in reply) resolve(reply.result);
      else reject(new Error(`the fuzz campaign thread failed: ${reply.error}`));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the fuzz campaign thread exited with code ${code} before it replied`));
    });
  });
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadJob> | null)?.kvqualFuzzCampaign) {
  const port = parentPort;
  let reply: ThreadReply;
  try {
    reply = { result: runFuzzCampaign((workerData as ThreadJob).kvqualFuzzCampaign) };
  } catch (error) {
    reply = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  port.postMessage(reply);
}
