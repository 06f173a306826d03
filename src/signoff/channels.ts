// Every channel of a cucumber run must tell one story: its exit status, the summary line it printed
// ("3 scenarios (1 failed, 2 passed)"), its JUnit report and its message stream. The sign-off is
// built from the stream alone, so code loaded into the run (a support file, NODE_OPTIONS=--require)
// that rewrites the stream at exit could turn a failure into a pass; the other channels, written
// by cucumber and its process, then disagree, and any disagreement fails the Channels gate, named.
// Compared by what decides a verdict: how many scenarios ran, how many passed, and whether the run
// succeeded. Pure: texts and numbers in, words out.
import type { RunModel } from './messages';
import type { Gate } from './model';

/** The title of the gate these checks decide. */
export const CHANNELS_GATE = 'Channels';

/** What one cucumber run left behind, each channel null when it was not captured. */
export interface RunChannels {
  /** "run 1 of 2", "shard 2 of 3, run 2 of 2". */
  label: string;
  /** Cucumber's exit status (null: stopped by a signal); undefined when not known (not compared). */
  exitStatus?: number | null;
  /** What cucumber printed (its summary line is read from it). */
  output?: string | null;
  /** Its junit.xml. */
  junit?: string | null;
  /** Its message stream's text. */
  stream: string | null;
}

/** How many scenarios ran and how many of them passed. */
export interface Tally {
  ran: number;
  passed: number;
}

/** Cucumber's summary line in its console output ("3 scenarios (1 failed, 2 passed)"), read; null when it printed none. */
export function summaryTally(output: string): Tally | null {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const match = /^(\d+) scenarios?(?: \(([^)]*)\))?$/m.exec(plain);
  if (!match) return null;
  const passed = /(?:^|, )(\d+) passed(?:,|$)/.exec(match[2] ?? '');
  return { ran: Number(match[1]), passed: passed ? Number(passed[1]) : 0 };
}

/** A JUnit report's test suite counts (cucumber's formatter: every case started, skipped, failures, errors); null when it has none. */
export function junitTally(xml: string): Tally | null {
  const suite = /<testsuite\b([^>]*)>/.exec(xml);
  if (!suite) return null;
  const attribute = (name: string): number | null => {
    const found = new RegExp(`\\s${name}="(\\d+)"`).exec(suite[1]);
    return found ? Number(found[1]) : null;
  };
  const tests = attribute('tests');
  if (tests === null) return null;
  const notPassed = (attribute('failures') ?? 0) + (attribute('errors') ?? 0) + (attribute('skipped') ?? 0);
  return { ran: tests, passed: tests - notPassed };
}

/** Whether a message stream's testRunFinished says the run succeeded; null without one. */
export function streamSuccess(ndjson: string): boolean | null {
  let success: boolean | null = null;
  for (const line of ndjson.split('\n')) {
    if (!line.startsWith('{"testRunFinished"')) continue;
    try {
      success = (JSON.parse(line) as { testRunFinished: { success: boolean } }).testRunFinished.success === true;
    } catch {
      success = null;
    }
  }
  return success;
}

/** The scenarios a parsed stream ran (those cucumber started) and how many passed. */
export function streamTally(run: RunModel): Tally {
  const ran = run.scenarios.filter((s) => s.status !== 'NOT RUN');
  return { ran: ran.length, passed: ran.filter((s) => s.status === 'PASSED').length };
}

const tallyText = (t: Tally) => `${t.ran} ${t.ran === 1 ? 'scenario' : 'scenarios'}, ${t.passed} passed`;

/**
 * Where the channels of one run disagree with its message stream, in words naming the run and
 * both sides; empty when they agree. A run without a stream is judged elsewhere (nothing to compare).
 */
export function channelDisagreements(channels: RunChannels, run: RunModel | null): string[] {
  if (channels.stream === null || run === null) return [];
  const problems: string[] = [];
  const { label } = channels;
  const stream = streamTally(run);
  const success = streamSuccess(channels.stream);
  const allPassed = stream.passed === stream.ran;
  if (success !== null && success !== allPassed) {
    problems.push(`${label}: its message stream says the run ${success ? 'succeeded' : 'failed'}, but records ${tallyText(stream)}`);
  }
  const streamSays = success ?? allPassed;
  if (channels.exitStatus !== undefined) {
    const exited = channels.exitStatus === null ? 'was stopped by a signal' : `exited with status ${channels.exitStatus}`;
    if ((channels.exitStatus === 0) !== streamSays) problems.push(`${label}: cucumber ${exited}, but its message stream says the run ${streamSays ? 'succeeded' : 'failed'} (${tallyText(stream)})`);
  }
  if (channels.output !== undefined) {
    const summary = channels.output === null ? null : summaryTally(channels.output);
    if (summary === null) problems.push(`${label}: cucumber printed no summary line ("N scenarios (…)") to compare its message stream with`);
    else if (summary.ran !== stream.ran || summary.passed !== stream.passed) problems.push(`${label}: cucumber's summary line says ${tallyText(summary)}, its message stream ${tallyText(stream)}`);
  }
  if (channels.junit !== undefined) {
    const junit = channels.junit === null ? null : junitTally(channels.junit);
    if (junit === null) problems.push(`${label}: its junit.xml is missing or has no test suite counts to compare its message stream with`);
    else if (junit.ran !== stream.ran || junit.passed !== stream.passed) problems.push(`${label}: its junit.xml says ${tallyText(junit)}, its message stream ${tallyText(stream)}`);
  }
  return problems;
}

/** The words of a Channels gate that passed (the same for a run and a merge of shards). */
export const CHANNELS_AGREE = "cucumber's exit status, its summary line, junit.xml and the message stream agree for both runs";

/** The Channels gate: passed when no run's channels disagree, else each disagreement named. */
export function channelsGate(problems: readonly string[]): Gate {
  return {
    title: CHANNELS_GATE,
    passed: problems.length === 0,
    summary: problems.length === 0 ? CHANNELS_AGREE : `cucumber's own channels disagree with the message stream the sign-off is built from: ${problems.join('; ')}`,
  };
}
