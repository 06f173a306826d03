// One scenario's state: its seed, the cluster it describes, the named prefixes it uses, the
// router-level replay built from them and the numbers its steps measured (for the sign-off's
// traceability matrix). Steps read and change it; src/ does the simulating.
import { IWorldOptions, World, setWorldConstructor } from '@cucumber/cucumber';
import { namedChunk, Prompt } from '../../src/prompt';
import type { TokenChunk } from '../../src/hash';
import { RouterReplay } from '../../src/sim/routerReplay';
import { DEFAULT_ROUTER_SETTINGS } from '../../src/router/router';
import { formatNs, parseDurationNs, type Nanos } from '../../src/time';
import { EngineScenario } from './engineScenario';
import type { ClusterSetup } from './setup';
import { Measurement, measurement } from '../../src/report/evidence';
import { awaitingAssertion } from './measured';
import type { SloChart } from '../../src/report/sloChart';

export const DEFAULT_SEED = 1893;

/** The seed of this run: KVQUAL_SEED when given, else the default. */
export function runSeed(): number {
  const text = process.env.KVQUAL_SEED;
  if (text === undefined || text === '') return DEFAULT_SEED;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`KVQUAL_SEED="${text}" is not an integer seed`);
  return seed;
}

export type { ClusterSetup };

export class KvWorld extends World {
  readonly seed = runSeed();
  readonly setup: ClusterSetup = { workers: 0, dp_size: 1, block_size: 16, lag_ns: 0, router: { ...DEFAULT_ROUTER_SETTINGS } };
  private readonly prefixes = new Map<string, TokenChunk>();
  private replayInstance: RouterReplay | null = null;
  private requestCount = 0;
  private readonly deferred: ((replay: RouterReplay) => void)[] = [];
  /** The request the scenario's last `When` sent, for `Then it …` steps. */
  lastRequestId: string | null = null;
  private engineInstance: EngineScenario | null = null;
  /** The prefix that request started with, if any. */
  lastPrefix: string | null = null;
  /**
   * What a scenario that simulates nothing computed (blocks cut from prompts, a config's times),
   * for its evidence: `kind` names it, the record is digested (see recordComputation).
   */
  computation: { kind: string; record: Record<string, unknown> } | null = null;
  /** Set by the perturbation test double (steps/support/perturb.ts): a computation records a probe too. */
  perturbComputation = false;

  /** Keeps what the scenario computed for its evidence; under the perturbation test double, with a probe beside it. */
  recordComputation(kind: string, record: Record<string, unknown>): void {
    this.computation = { kind, record: this.perturbComputation ? { ...record, perturbation_probe: 'kvqual perturbation probe' } : record };
  }

  /** The prompts the last `When … cut into … blocks` step cut, and the block size it cut them into. */
  cut: { block_size: number; prompts: Prompt[] } | null = null;
  /** The arrival, in ns, of the request of the last config a step read (see config.steps.ts). */
  arrival_ns: number | null = null;
  /** Numbers the `Then` steps measured, in the order they checked them. */
  readonly measurements: Measurement[] = [];
  /** What the SLO steps claimed, for the card's CDF chart (steps/slo.steps.ts), in the order they checked it. */
  readonly sloCharts: SloChart[] = [];
  /** The scenario's level, fixed by its first router-level or engine-level step (see catalogue.ts), and that step's text. */
  scenarioLevel: { level: 'router' | 'engine'; since: string } | null = null;
  /** The text of the step running now (set before each step), for messages that quote it. */
  stepText = '';

  constructor(options: IWorldOptions) {
    super(options);
  }

  /** The router-level replay, built from the setup on first use; the setup is fixed from then on. */
  get replay(): RouterReplay {
    if (!this.replayInstance) {
      this.replayInstance = this.buildReplay();
      for (const step of this.deferred) step(this.replayInstance);
    }
    return this.replayInstance;
  }

  private buildReplay(seed = this.seed): RouterReplay {
    if (this.setup.workers === 0) throw new Error("this step needs a router-level cluster, and none was described: begin with 'Given a cluster of 2 aggregated workers with 16-token blocks'");
    const replay = new RouterReplay({
      seed,
      lag_ns: this.setup.lag_ns,
      router: { ...this.setup.router, block_size: this.setup.block_size },
    });
    for (let worker = 0; worker < this.setup.workers; worker++) replay.addWorker(worker, this.setup.dp_size);
    return replay;
  }

  /** A fresh router-level replay of everything the scenario described so far, run to the end (DET-1 checks; another seed: SCORE-3's draw). */
  replayAgain(seed = this.seed): RouterReplay {
    const replay = this.buildReplay(seed);
    for (const step of this.deferred) step(replay);
    replay.run();
    return replay;
  }

  /** The engine-level scenario (cluster table, conversations, runs), created on first use. */
  get engine(): EngineScenario {
    if (!this.engineInstance) {
      this.engineInstance = new EngineScenario(this.setup);
      this.engineInstance.perturbed = this.perturbEngine;
    }
    return this.engineInstance;
  }

  /** Set by the perturbation test double (steps/support/perturb.ts) before any step runs. */
  perturbEngine = false;

  /** Parses a duration written in a step ("20 ms"). */
  parseDuration(text: string): Nanos {
    return parseDurationNs(text);
  }

  get hasEngine(): boolean {
    return this.engineInstance !== null;
  }

  /**
   * Records a number a step is about to assert, as measured (call it before the assertion, so a
   * failing scenario still shows the actual value). `text` overrides "label = value unit".
   */
  measure(label: string, value: number, unit = '', text?: string): number {
    this.measurements.push(awaitingAssertion(measurement(label, value, unit, text)));
    return value;
  }

  get hasReplay(): boolean {
    return this.replayInstance !== null;
  }

  /**
   * Queues something the scenario's `Given` steps describe (an event, a busy worker), applied in
   * order when the replay is built, so settings and history can be written in any order.
   */
  later(step: (replay: RouterReplay) => void): void {
    this.deferred.push(step);
    if (!this.replayInstance) return;
    const ranTo = this.replayInstance.kernel.now;
    try {
      step(this.replayInstance);
    } catch (error) {
      // Something scheduled before the instant a When already ran the replay to: it cannot happen now.
      if (error instanceof Error && /the clock is already at/.test(error.message)) {
        throw new Error(`this step happens before ${formatNs(ranTo)}, where a When has already run the replay: put it before that When, or give it a later time`);
      }
      throw error;
    }
  }

  /** Changes the setup; fails if the cluster has already started. */
  configure(change: (setup: ClusterSetup) => void): void {
    if (this.replayInstance) throw new Error('the cluster is already running: describe its settings before any event or request');
    change(this.setup);
  }

  definePrefix(name: string, length_tokens: number): void {
    if (this.prefixes.has(name)) throw new Error(`the prefix "${name}" is already defined`);
    this.prefixes.set(name, namedChunk(name, length_tokens));
  }

  prefix(name: string): TokenChunk {
    const chunk = this.prefixes.get(name);
    if (!chunk) throw new Error(`no prefix named "${name}": define it first (e.g. 'the prefix "${name}" is 16 tokens long')`);
    return chunk;
  }

  /** The prompt of a prefix alone, for block hashes of that prefix. */
  prefixPrompt(name: string): Prompt {
    return new Prompt([this.prefix(name)]);
  }

  /** A new request id and a prompt of a prefix followed by `own_tokens` tokens unique to the request. */
  newRequest(prefixName: string | null, own_tokens: number): { request_id: string; prompt: Prompt } {
    const request_id = `r${++this.requestCount}`;
    const chunks = prefixName === null ? [] : [this.prefix(prefixName)];
    if (own_tokens > 0) chunks.push(namedChunk(`own text of ${request_id}`, own_tokens));
    return { request_id, prompt: new Prompt(chunks) };
  }
}

setWorldConstructor(KvWorld);
