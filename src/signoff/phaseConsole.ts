// What a qualification prints on the console. Phases that do not depend on each other run at once
// and end in any order; the console prints one line per finished phase, with its result and time,
// in number order (a phase that ends early waits for those before it). On a terminal the caller
// shows a live status line beside them (what runs, for how long: status()). Every line is fitted
// to the console's width (the terminal's, or 100 columns when piped): long ones wrap at a space,
// indented. Tools' own output never passes through; the failures are printed once, at the end,
// with the verdict and each gate. The clock and the width come from the caller.
import { statusWord, type SignoffModel } from './model';
import { NARROWED_VERDICT } from './narrowed';
import path from 'node:path';
import { countOf, seconds } from './context';
import type { DriverContext, PhaseStatus } from './context';
import type { Measured } from './coverageRun';

/** The width of a console that is not a terminal (piped output, a CI log). */
export const PIPED_COLUMNS = 100;
/** The narrowest width lines are fitted to, whatever the terminal says. */
const MIN_COLUMNS = 40;
const INDENT = '      ';

/** The width lines are fitted to: the terminal's (at least MIN_COLUMNS), or PIPED_COLUMNS. */
export function consoleColumns(ctx: Pick<DriverContext, 'columns'>): number {
  return Math.max(MIN_COLUMNS, ctx.columns ?? PIPED_COLUMNS);
}

/** One line of text as lines of at most `columns` characters: broken at spaces, continued indented; a word longer than a line is cut. */
export function wrapLine(text: string, columns: number, indent = INDENT): string[] {
  const lines: string[] = [];
  let rest = text.replace(/\s+$/, '');
  let prefix = '';
  while (prefix.length + rest.length > columns) {
    const room = columns - prefix.length;
    let cut = rest.lastIndexOf(' ', room);
    if (cut <= 0) cut = room;
    lines.push(prefix + rest.slice(0, cut).replace(/\s+$/, ''));
    rest = rest.slice(cut).replace(/^ +/, '');
    prefix = indent;
  }
  lines.push(prefix + rest);
  return lines;
}

/** Text (any number of lines) fitted to `columns`, each line wrapped; control characters other than newlines removed. */
export function fitText(text: string, columns: number): string {
  return text
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    .replace(/[\x00-\x09\x0b-\x1f\x7f]/g, (c) => (c === '\t' ? ' ' : ''))
    .split('\n')
    .flatMap((line) => wrapLine(line, columns))
    .join('\n');
}

/** A line cut to `columns` characters, ending in "…" when cut. */
export function cutLine(text: string, columns: number): string {
  return text.length <= columns ? text : `${text.slice(0, Math.max(0, columns - 1))}…`;
}

interface PhaseState {
  title: string;
  started: number | null;
  /** The finished line, once the phase has ended (or was left out). */
  line: string | null;
}


/**
 * The phases of one qualification on the console: `run` runs one and prints its line when it and
 * every phase before it have ended; `skip` marks one that will not run; `note` prints a message
 * between phases; `close` prints what is left, in order.
 */
export class PhaseConsole {
  private readonly phases: PhaseState[];
  private printed = 0;
  private readonly began: number;

  constructor(
    private readonly ctx: Pick<DriverContext, 'write' | 'now' | 'columns'>,
    titles: string[],
  ) {
    this.phases = titles.map((title) => ({ title, started: null, line: null }));
    this.began = ctx.now();
  }

  get total(): number {
    return this.phases.length;
  }

  /** Runs phase `index` (0-based); its line says `summary(value)` when given, and its time. */
  async run<T>(index: number, fn: () => T | Promise<T>, summary?: (value: T) => string | null): Promise<T> {
    const phase = this.phases[index];
    phase.started = this.ctx.now();
    const value = await fn();
    const said = summary?.(value) ?? null;
    this.finish(index, `${said === null ? 'done' : said} (${seconds(this.ctx.now() - phase.started)})`);
    return value;
  }

  /** A phase that will not run (what it needed failed before it), said why. */
  skip(index: number, why: string): void {
    this.finish(index, `not run: ${why}`);
  }

  /** The first line: how many phases (`atOnce`: the independent ones run at once), and how their lines come. */
  announce(atOnce: boolean): void {
    this.note(`qualify: ${countOf(this.phases.length, 'phase')}${atOnce ? ', independent ones at once' : ''}; a line for each as it ends, in number order`);
  }

  /** A message of its own, printed at once, fitted to the width. */
  note(text: string): void {
    this.ctx.write(`${fitText(text, consoleColumns(this.ctx))}\n`);
  }

  /** The phases not printed yet, in order (one never run says so). */
  close(): void {
    for (const phase of this.phases) if (phase.line === null) phase.line = this.lineOf(this.phases.indexOf(phase), 'not run');
    this.flush();
  }

  /** Phases done of all and those running, with their times so far; cut to the width by the caller's display. */
  status(): PhaseStatus {
    const now = this.ctx.now();
    const done = this.phases.filter((p) => p.line !== null).length;
    const running = this.phases
      .map((p, i) => ({ p, i }))
      .filter(({ p }) => p.started !== null && p.line === null)
      .map(({ p, i }) => `[${i + 1}] ${shortTitle(p.title)} ${Math.floor((now - p.started!) / 1000)} s`);
    const text = `${running.length > 0 ? `running ${running.join(', ')}` : 'starting'} · ${Math.floor((now - this.began) / 1000)} s in all`;
    return { done, total: this.phases.length, text };
  }

  private finish(index: number, result: string): void {
    this.phases[index].line = this.lineOf(index, result);
    this.flush();
  }

  private lineOf(index: number, result: string): string {
    return fitText(`[${index + 1}/${this.phases.length}] ${this.phases[index].title}: ${result}`, consoleColumns(this.ctx));
  }

  private flush(): void {
    while (this.printed < this.phases.length && this.phases[this.printed].line !== null) this.ctx.write(`${this.phases[this.printed++].line}\n`);
  }
}

/** A phase's title up to its first colon or parenthesis, for the status line. */
function shortTitle(title: string): string {
  return title.split(/[:(]/)[0].trim();
}

/** Prints each phase of a sequence (a merge) with its time when it ends, in order. */
export function phaseRunner(ctx: DriverContext, phases: string[]): <T>(fn: () => T | Promise<T>) => Promise<T> {
  const printer = new PhaseConsole(ctx, phases);
  let index = 0;
  return <T>(fn: () => T | Promise<T>): Promise<T> => printer.run(index++, fn);
}

/** A failure to print once: what did not pass, where, and why in one line. */
export interface ConsoleFailure {
  kind: string;
  name: string;
  where: string;
  why?: string;
}

/**
 * What did not pass, each once: the scenarios of the sign-off that did not pass (an undefined
 * step with its nearest phrases), then the failures of the compiled run that they do not already
 * name (the same scenario failing in both runs is one failure).
 */
export function failuresToPrint(model: Pick<SignoffModel, 'notPassed'>, measured: Measured | null): ConsoleFailure[] {
  const failures: ConsoleFailure[] = model.notPassed
    .filter((view) => view.scenario.emptyExamples === undefined)
    .map((view) => {
      const { scenario } = view;
      const step = scenario.steps.find((s) => s.status !== 'PASSED' && s.status !== 'SKIPPED');
      const phrases = view.suggestions.find((s) => s.step === step)?.phrases ?? [];
      const message = step?.message ? `: ${step.message.split('\n')[0]}` : step && step.kind === 'step' ? `: ${step.keyword.trim()} ${step.text}` : '';
      const suggested = phrases.length > 0 ? `; did you mean: ${phrases.map((p) => `"${p}"`).join(' · ')}` : '';
      return { kind: 'scenario', name: scenario.name, where: scenario.key, why: step ? `${statusWord(step.status)}${message}${suggested}` : statusWord(scenario.status) };
    });
  const named = new Set(failures.map((f) => f.where));
  for (const failure of measured?.run.failures ?? []) if (!named.has(failure.where)) failures.push({ ...failure, kind: `${failure.kind} (compiled run only)` });
  return failures;
}

/** The verdict, each gate, the narrowing reasons and every failure, once. */
export function reportVerdict(ctx: DriverContext, model: SignoffModel, failures: ConsoleFailure[]): void {
  const columns = consoleColumns(ctx);
  const lines = [`verdict: ${model.verdict}`, ...model.gates.map((gate) => `${gate.passed ? 'pass' : 'FAIL'}  ${gate.title}: ${gate.summary}`)];
  if (model.verdict === NARROWED_VERDICT) lines.push(...model.narrowed.map((reason) => `not a release sign-off: ${reason}`));
  if (failures.length > 0) lines.push(`did not pass (${failures.length}):`, ...failures.map((f) => `  ✗ ${f.kind} "${f.name}" (${f.where})${f.why ? `: ${f.why}` : ''}`));
  ctx.write(`\n${lines.map((line) => fitText(line, columns)).join('\n')}\n`);
}

/** The last line: where the sign-off is, and the time of the whole run. */
export function reportWritten(ctx: DriverContext, out: string, ms: number): void {
  ctx.write(`\n${fitText(`sign-off: ${path.join(out, 'signoff.md')} and ${path.join(out, 'signoff.html')} (${seconds(ms)} in all)`, consoleColumns(ctx))}\n`);
}
