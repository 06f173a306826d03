// A fuzz campaign on a worker thread of its own, so `npm run qualify` can check the generated
// workloads while the feature runs use the other core: the same runFuzzCampaign, the same
// options (without the per-case callback), the same result, posted back when it ends. The thread
// loads this file (through tsx when running from the TypeScript sources) and runs the campaign it
// is given in workerData.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { runFuzzCampaign, type CampaignOptions, type CampaignResult } from './campaign';

type ThreadOptions = Omit<CampaignOptions, 'onCase'>;

interface ThreadJob {
  kvqualFuzzCampaign: ThreadOptions;
}

type ThreadReply = { result: CampaignResult } | { error: string };

/** Runs a campaign on a new worker thread; resolves with exactly what runFuzzCampaign returns there. */
export function runFuzzCampaignOnThread(options: ThreadOptions): Promise<CampaignResult> {
  const file = __filename;
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
