// What the caller (scripts/qualify.ts) gives the driver: the repository root, the environment, the
// clock for phase times, git, the console, cucumber's report formatters and how the suite runs
// (DriverContext); and the small helpers every phase shares (nonces, paths from the root, counts and seconds in words).
import path from 'node:path';
import { type FigureCache } from '../report/figure';
import { Subject } from './model';
import type { FaultCheck } from './faults';
import type { Git } from './worktree';

/** What a live status line shows: phases done of all, and what runs now (phaseConsole.ts). */
export interface PhaseStatus {
  done: number;
  total: number;
  text: string;
}

export interface DriverContext {
  /** The repository root (package.json, node_modules, cucumber.js). */
  root: string;
  env: NodeJS.ProcessEnv;
  /** Milliseconds, for phase times only. */
  now(): number;
  /** The date line of the report. */
  date(): string;
  subject(): Subject;
  /** The console: whole lines, already fitted to `columns` (phaseConsole.ts). */
  write(text: string): void;
  /** The terminal's width in characters; absent when the console is not a terminal (then lines fit 100 columns). */
  columns?: number;
  /**
   * On a terminal: a live status line beside the printed lines, which the caller refreshes from
   * `status` on its own clock (at least every few seconds) until `stop` (which may be called twice).
   */
  liveStatus?(status: () => PhaseStatus): { stop(): void };
  /**
   * Cucumber's HTML and JUnit reports rendered from a message stream (the merge's merged stream);
   * without it the merge leaves cucumber.html and junit.xml saying where the shards' own are.
   */
  cucumberReports?(ndjson: string): Promise<{ html: string; junit: string }>;
  /**
   * Where drawn figures are kept by their spec (the cucumber runs' own cache, which run 1 has just
   * filled with every scenario's figure): the sign-off then draws only what is not there.
   */
  figureCache?: FigureCache;
  /** The run's temporary folder: the compiled coverage run's TMPDIR, and where suite runs keep their scratch folders; the caller removes it, even when stopped. */
  coverageTemp?: string;
  /** git in the checkout (provenance.ts's safe git): the tree a shard records, and the merge's check of its own checkout. */
  git?: Git;
  /** A fresh unguessable nonce for one cucumber run (random; shardTrust.ts). */
  nonce?(): string;
  /** How the suite runs on tsx and the planted-fault check are made; without it, real processes (suiteRunner.ts's PROCESS_SUITE_RUNNER). */
  suiteRunner?: SuiteRunner;
}

/** What a tool left when it ended: its exit status (null: stopped by a signal) and everything it printed. */
export interface Spawned {
  status: number | null;
  output: string;
}

/** One cucumber run of the suite or of some of its scenarios. */
export interface SuiteRun {
  /** cucumber.js's profile: `replay` (TypeScript through tsx) or `compiled` (build/, processes only). */
  profile: 'replay' | 'compiled';
  /** Feature files, globs or `file:line`, relative to the repository root. */
  paths: string[];
  /** cucumber's `--shard i/n`, or null for every scenario. */
  shard: string | null;
  /** cucumber's `--order` (`random:SEED`), or null for file order. */
  order: string | null;
  /** The report files cucumber's own formatters write, relative to the repository root (`summary`: its summary formatter on the console too). */
  reports: { html?: string; junit?: string; message?: string; summary?: boolean };
  /** The run's whole environment (the steps read their test doubles and the run nonce there). */
  env: NodeJS.ProcessEnv;
  /** Work beside the longest phase: at a lower priority where that means something (spawn.ts). */
  beside: boolean;
}

/** Run 1 and the planted-fault check after it, as they end. */
export interface FirstRun {
  /** Run 1 has ended (its reports are written): what it printed, its summary line last. */
  ended: Promise<string>;
  /** Its exit status as cucumber's command line gives it (0 when the run succeeded, 1 when not) and what its process printed, once that has ended (after the faults, when they share it). */
  exited: Promise<Spawned>;
  /** The planted-fault check (faults.ts) of what passed in its message stream, in its environment; null when it wrote none. What kept the check from completing is one of its problems. */
  faults: Promise<FaultCheck | null>;
}

export interface SuiteRunner {
  /** One run: its exit status as cucumber's command line gives it (0 when the run succeeded, 1 when not) and what it printed (its progress and summary line). */
  run(ctx: DriverContext, request: SuiteRun): Promise<Spawned>;
  /** Run 1 (`request`, which writes a message stream), then the planted-fault check of its stream. */
  runFirst(ctx: DriverContext, request: SuiteRun): FirstRun;
}

let nonceCount = 0;
/** The caller's nonce, or (a caller without one, in tests) a distinct one made from the clock. */
export function newNonce(ctx: DriverContext): string {
  return ctx.nonce?.() ?? `run-${ctx.now()}-${++nonceCount}`;
}

/** A path relative to the repository root, for the tools run there. */
export function fromRoot(root: string, p: string): string {
  return path.relative(root, path.resolve(p)).split(path.sep).join('/') || '.';
}

export function countOf(n: number, one: string): string {
  return `${n} ${n === 1 ? one : `${one}s`}`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
