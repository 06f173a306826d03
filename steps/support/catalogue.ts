// The step catalogue: every step is defined through `Given`/`When`/`Then` from here, which take,
// beside the phrase and the code, what a reader needs to use it — its domain (the section of
// docs/steps.md it belongs to), its level (router-level, engine-level or either), what it does or
// checks in one sentence, and, for a regular expression, the phrase in words. scripts/steps-doc.ts
// writes docs/steps.md from this (and fails on a step without it), and the level is enforced: a
// step of one level in a scenario of the other fails with one plain sentence saying how to begin
// a scenario of its level, never with a TypeError from the other level's state.
import path from 'node:path';
import { Given as cucumberGiven, When as cucumberWhen, Then as cucumberThen, supportCodeLibraryBuilder } from '@cucumber/cucumber';
import type { KvWorld } from './world';
import { ConfigError } from '../../src/config/load';

/** The sections of the catalogue, in the order docs/steps.md lists them. */
export const DOMAINS = {
  cluster: 'The cluster',
  requests: 'Requests and conversations',
  events: 'KV events and lag',
  routing: 'Routing outcomes',
  engine: 'Engine outcomes',
  agentic: 'Agentic plays',
  configuration: 'Configuration',
  slo: 'Service-level objectives',
  blocks: 'Blocks and hashes',
  documents: 'Documents',
  fuzzer: 'Generated cases (fuzzer only)',
} as const;

export type Domain = keyof typeof DOMAINS;

/**
 * router: the scenario is the router and its event mirror alone, KV events written step by step;
 * engine: a cluster described by a settings table, whose engines decide what is cached;
 * either: needs no cluster of one kind (prefixes, prompts cut into blocks, a config read, a document).
 */
export type Level = 'router' | 'engine' | 'either';

export interface StepInfo {
  domain: Domain;
  level: Level;
  /** What the step does (Given, When) or checks (Then), in one sentence. */
  says: string;
  /** The phrase with its placeholders in words; required for a regular expression, derived otherwise. */
  words?: string;
}

/** Where a definition's info is kept on its function (a global symbol: any copy of this module finds it). */
export const STEP_INFO = Symbol.for('kvqual.stepInfo');

type StepCode = (this: KvWorld, ...args: never[]) => unknown;

export const LEVEL_NAMES: Record<Level, string> = { router: 'router-level', engine: 'engine-level', either: 'either level' };

/** How a scenario of each level begins, for the messages that send a reader there. */
export const LEVEL_OPENINGS: Record<Exclude<Level, 'either'>, string> = {
  router: "'Given a cluster of 2 aggregated workers with 16-token blocks'",
  engine: "'Given a cluster of 2 aggregated workers with these settings:' and a settings table",
};

/** The sentence a step of `level` fails with in a scenario that is already of the other level, since `since`. */
export function levelConflict(level: Exclude<Level, 'either'>, scenario: { level: Exclude<Level, 'either'>; since: string }): string {
  return (
    `this step is ${LEVEL_NAMES[level]}, but this scenario is ${LEVEL_NAMES[scenario.level]} since "${scenario.since}": ` +
    `${level === 'engine' ? 'an' : 'a'} ${LEVEL_NAMES[level]} scenario begins with ${LEVEL_OPENINGS[level]} (docs/steps.md gives each step's level)`
  );
}

/** Fixes the scenario's level at its first step of one level; fails a step of the other level plainly. */
export function enterLevel(world: KvWorld, level: Level): void {
  if (level === 'either') return;
  const current = world.scenarioLevel;
  if (current === null) world.scenarioLevel = { level, since: world.stepText || 'its first step' };
  else if (current.level !== level) throw new Error(levelConflict(level, current));
}

/** A setup the config loader refused (a step that expects a refusal catches it first), in one sentence. */
export function refusedSetup(error: ConfigError): string {
  return `the cluster this scenario describes cannot be set up: ${error.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`;
}

/** The place (file and line) of the step file that called Given/When/Then here, as cucumber would record it. */
function callerPlace(): { uri: string; line: number } | null {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  for (const frame of frames) {
    const match = /\(?((?:file:\/\/)?[^()\s]+):(\d+):\d+\)?$/.exec(frame.trim());
    const file = match?.[1].replace(/^file:\/\//, '');
    if (!match || !file || file === __filename || file.includes('node_modules') || file.startsWith('node:')) continue;
    return { uri: path.relative(process.cwd(), file), line: Number(match[2]) };
  }
  return null;
}

function define(register: typeof cucumberGiven, pattern: string | RegExp, info: StepInfo, code: StepCode): void {
  if (pattern instanceof RegExp && !info.words) throw new Error(`the step /${pattern.source}/ needs its phrase in words (info.words) for docs/steps.md`);
  const wrapped = function (this: KvWorld, ...args: never[]): unknown {
    enterLevel(this, info.level);
    try {
      return code.apply(this, args);
    } catch (error) {
      throw error instanceof ConfigError ? new Error(refusedSetup(error)) : error;
    }
  };
  // Cucumber reads a step function's arity (a data table or doc string is one more parameter): keep it.
  Object.defineProperty(wrapped, 'length', { value: code.length });
  Object.defineProperty(wrapped, STEP_INFO, { value: info });
  register(pattern, wrapped as never);
  // Cucumber records where a step is defined from the stack: the step file, not this module.
  const place = callerPlace();
  const configs = (supportCodeLibraryBuilder as unknown as { stepDefinitionConfigs?: { uri: string; line: number }[] }).stepDefinitionConfigs;
  const config = configs?.at(-1);
  if (place && config) Object.assign(config, place);
}

export function Given(pattern: string | RegExp, info: StepInfo, code: StepCode): void {
  define(cucumberGiven, pattern, info, code);
}

export function When(pattern: string | RegExp, info: StepInfo, code: StepCode): void {
  define(cucumberWhen, pattern, info, code);
}

export function Then(pattern: string | RegExp, info: StepInfo, code: StepCode): void {
  define(cucumberThen, pattern, info, code);
}

/** The info of a loaded step definition's code (cucumber's `unwrappedCode`), or null for a step defined without it. */
export function stepInfoOf(code: unknown): StepInfo | null {
  return (code as { [STEP_INFO]?: StepInfo } | null)?.[STEP_INFO] ?? null;
}
