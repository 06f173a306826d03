// What the caller (scripts/qualify.ts) gives the driver: the repository root, the environment, the
// clock for phase times, git, the console, cucumber's report formatters and how the suite runs
// (DriverContext); and the small helpers every phase shares (nonces, paths from the root, counts and seconds in words).
import path from 'node:path';
import { type FigureCache } from '../report/figure';
import { Subject } from './model';
import type { SuiteRunner } from './suiteRunner';
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
  /** The temporary folder (TMPDIR) of the compiled coverage run, whose unit tests make scratch folders: the caller removes it, even when stopped. */
  coverageTemp?: string;
  /** git in the checkout (provenance.ts's safe git): the tree a shard records, and the merge's check of its own checkout. */
  git?: Git;
  /** A fresh unguessable nonce for one cucumber run (random; shardTrust.ts). */
  nonce?(): string;
  /** How the suite runs on tsx and the planted-fault check are made; without it, real processes (suiteRunner.ts). */
  suiteRunner?: SuiteRunner;
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
