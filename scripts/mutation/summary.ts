// Reading StrykerJS's JSON mutation report (mutation-testing-report-schema): the mutation score
// overall and per directory, and the surviving mutants worth a test, in source order. A survivor
// that only changes the text of an error message (a string literal on a `throw` or `Error(` line)
// is counted but not listed unless asked for: the message is for people, its wording is not
// behaviour.
import { compareText } from '../../src/order';

export type MutantStatus = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

export interface ReportMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

export interface MutationReport {
  files: Record<string, { source: string; mutants: ReportMutant[] }>;
}

export interface Tally {
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  errors: number;
  ignored: number;
}

export interface Survivor {
  file: string;
  line: number;
  column: number;
  mutator: string;
  status: 'Survived' | 'NoCoverage';
  original: string;
  replacement: string;
  messageText: boolean;
}

export function emptyTally(): Tally {
  return { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0, ignored: 0 };
}

export function addToTally(tally: Tally, status: MutantStatus): void {
  if (status === 'Killed') tally.killed++;
  else if (status === 'Timeout') tally.timeout++;
  else if (status === 'Survived') tally.survived++;
  else if (status === 'NoCoverage') tally.noCoverage++;
  else if (status === 'CompileError' || status === 'RuntimeError') tally.errors++;
  else if (status === 'Ignored') tally.ignored++;
  else throw new Error(`mutant status ${status} is not a final result (was the run interrupted?)`);
}

/** Stryker's mutation score: detected (killed + timed out) over valid (detected + survived + no coverage), in %. */
export function mutationScore(tally: Tally): number | null {
  const detected = tally.killed + tally.timeout;
  const valid = detected + tally.survived + tally.noCoverage;
  return valid === 0 ? null : (100 * detected) / valid;
}

/** The same over covered mutants only (what the tests that ran could have caught). */
export function coveredScore(tally: Tally): number | null {
  const detected = tally.killed + tally.timeout;
  const covered = detected + tally.survived;
  return covered === 0 ? null : (100 * detected) / covered;
}

/** Tally per directory of the mutated files (src/router, …), sorted, plus the whole. */
export function tallies(report: MutationReport): { total: Tally; byDirectory: Map<string, Tally> } {
  const total = emptyTally();
  const byDirectory = new Map<string, Tally>();
  for (const file of Object.keys(report.files).sort()) {
    const directory = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.';
    if (!byDirectory.has(directory)) byDirectory.set(directory, emptyTally());
    for (const mutant of report.files[file].mutants) {
      addToTally(total, mutant.status);
      addToTally(byDirectory.get(directory)!, mutant.status);
    }
  }
  return { total, byDirectory: new Map([...byDirectory].sort(([a], [b]) => compareText(a, b))) };
}

function textAt(lines: string[], location: ReportMutant['location']): string {
  const { start, end } = location;
  if (start.line === end.line) return lines[start.line - 1].slice(start.column - 1, end.column - 1);
  return `${lines[start.line - 1].slice(start.column - 1)} …`;
}

/** Survived and not-covered mutants, by file then position. */
export function survivors(report: MutationReport): Survivor[] {
  const found: Survivor[] = [];
  for (const file of Object.keys(report.files).sort()) {
    const lines = report.files[file].source.split(/\r?\n/);
    for (const mutant of report.files[file].mutants) {
      if (mutant.status !== 'Survived' && mutant.status !== 'NoCoverage') continue;
      const { line, column } = mutant.location.start;
      const statement = `${lines[line - 2] ?? ''}\n${lines[line - 1] ?? ''}`;
      found.push({
        file,
        line,
        column,
        mutator: mutant.mutatorName,
        status: mutant.status,
        original: textAt(lines, mutant.location),
        replacement: mutant.replacement ?? mutant.mutatorName,
        messageText: mutant.mutatorName === 'StringLiteral' && /\bthrow\b|Error\(/.test(statement),
      });
    }
  }
  return found.sort((a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column);
}

const oneLine = (text: string, max = 70) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function formatSurvivor(s: Survivor): string {
  const tag = s.status === 'NoCoverage' ? ' (no test runs it)' : '';
  return `${s.file}:${s.line}:${s.column}  ${s.mutator}: ${oneLine(s.original)} → ${oneLine(s.replacement)}${tag}`;
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(2)} %`);

export function formatTally(name: string, tally: Tally): string {
  return (
    `${name}: score ${percent(mutationScore(tally))} (covered ${percent(coveredScore(tally))}); ` +
    `killed ${tally.killed}, timeout ${tally.timeout}, survived ${tally.survived}, no coverage ${tally.noCoverage}, errors ${tally.errors}`
  );
}

/** The text `npm run mutation` prints after Stryker: scores, then the survivors worth a test. */
export function summarise(report: MutationReport, options: { all: boolean }): string {
  const { total, byDirectory } = tallies(report);
  const out: string[] = [formatTally('mutation score (all mutated files)', total)];
  for (const [directory, tally] of byDirectory) out.push(`  ${formatTally(directory, tally)}`);
  const all = survivors(report);
  const listed = options.all ? all : all.filter((s) => !s.messageText);
  out.push('', `surviving mutants${options.all ? '' : ' that change behaviour'} (${listed.length}):`);
  for (const s of listed) out.push(`  ${formatSurvivor(s)}`);
  const hidden = all.length - listed.length;
  if (hidden > 0) out.push(`  (+ ${hidden} that only change an error message's text; --all lists them)`);
  return out.join('\n');
}
