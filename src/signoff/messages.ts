// Reading a cucumber run from its message stream (NDJSON envelopes: sources, Gherkin documents,
// pickles, test cases, step results, attachments) — never from console text. Produces one record
// per scenario (per Examples row): its steps as written with their results, its worst status,
// its tags and its kvqual evidence. Local types cover only the fields used, so this library
// needs no cucumber package.
import { EVIDENCE_MEDIA_TYPE, HOOK_ATTACHMENT_FILES, parseEvidence, ScenarioEvidence } from '../report/evidence';
import { compareText } from '../order';

export type StepStatus = 'PASSED' | 'SKIPPED' | 'PENDING' | 'UNDEFINED' | 'AMBIGUOUS' | 'FAILED' | 'UNKNOWN';
/** A scenario's status is its worst step's; NOT RUN when cucumber never started it. */
export type ScenarioStatus = StepStatus | 'NOT RUN';

const RANK: Record<StepStatus, number> = { PASSED: 0, SKIPPED: 1, PENDING: 3, UNDEFINED: 4, AMBIGUOUS: 5, FAILED: 6, UNKNOWN: 6 };

export interface RunStep {
  kind: 'step' | 'before hook' | 'after hook';
  keyword: string;
  /**
   * What Gherkin made of the step (its pickle step's type): Context (Given), Action (When), Outcome
   * (Then, and an And or But after it), Unknown (a `*` step); null for a hook, or a stream without it.
   */
  type: string | null;
  text: string;
  table: string[][] | null;
  docString: string | null;
  status: StepStatus | 'NOT RUN';
  message: string | null;
}

export interface RunAttachment {
  mediaType: string;
  fileName: string | null;
  /** Decoded text (base64 bodies are decoded as UTF-8). */
  text: string;
}

export interface RunScenario {
  /** `uri:line`: stable across runs (pickle ids are not). */
  key: string;
  uri: string;
  line: number;
  name: string;
  feature: { name: string; description: string };
  rule: string | null;
  tags: string[];
  steps: RunStep[];
  status: ScenarioStatus;
  evidence: ScenarioEvidence | null;
  evidenceError: string | null;
  attachments: RunAttachment[];
  /** The note of the perturbation test double when it perturbed this scenario, else null. */
  perturbation: string | null;
  /**
   * Set on the stand-in for a Scenario Outline's Examples table that has no rows (header only, or no
   * table): Gherkin makes no scenario of it, so cucumber never mentions it; this record (NOT RUN,
   * keyed by the Examples line, the outline's steps and tags) says why, so the sign-off can name it.
   */
  emptyExamples?: string;
}

export interface RunModel {
  scenarios: RunScenario[];
  sources: { uri: string; data: string }[];
  cucumberVersion: string | null;
  /** The phrases (cucumber expressions or regexps) of every step definition the run loaded, in load order. */
  phrases: string[];
  /** Problems of the run as a whole: parse errors, a run that did not finish, an exception. */
  runErrors: string[];
  finished: boolean;
}

// ── the envelope fields used ──
interface Tag {
  name: string;
}
interface AstStep {
  id: string;
  keyword: string;
}
interface AstScenario {
  id: string;
  name: string;
  keyword?: string;
  location?: { line: number };
  tags: Tag[];
  steps: (AstStep & { text?: string })[];
  examples: { keyword?: string; location?: { line: number }; tags?: Tag[]; tableBody?: { id: string }[] }[];
}
interface AstChild {
  background?: { steps: AstStep[] };
  scenario?: AstScenario;
  rule?: { name: string; tags?: Tag[]; children: AstChild[] };
}
interface GherkinDocument {
  uri?: string;
  feature?: { name: string; description: string; tags?: Tag[]; children: AstChild[] };
}
interface PickleStep {
  id: string;
  text: string;
  type?: string;
  astNodeIds: string[];
  argument?: { dataTable?: { rows: { cells: { value: string }[] }[] }; docString?: { content: string } };
}
interface Pickle {
  id: string;
  uri: string;
  location?: { line: number };
  name: string;
  tags: Tag[];
  astNodeIds: string[];
  steps: PickleStep[];
}
interface TestCase {
  id: string;
  pickleId: string;
  testSteps: { id: string; pickleStepId?: string; hookId?: string }[];
}
interface StepResult {
  status: StepStatus;
  message?: string;
  exception?: { message?: string };
}
interface Envelope {
  meta?: { implementation?: { name: string; version: string } };
  source?: { uri: string; data: string };
  gherkinDocument?: GherkinDocument;
  pickle?: Pickle;
  testCase?: TestCase;
  testCaseStarted?: { id: string; testCaseId: string; attempt: number };
  testCaseFinished?: { testCaseStartedId: string };
  testStepStarted?: { testCaseStartedId: string; testStepId: string };
  testStepFinished?: { testCaseStartedId: string; testStepId: string; testStepResult: StepResult };
  attachment?: { body: string; contentEncoding: 'IDENTITY' | 'BASE64'; mediaType: string; fileName?: string; testCaseStartedId?: string };
  parseError?: { source: { uri?: string; location?: { line: number } }; message: string };
  testRunFinished?: { success: boolean; message?: string; exception?: { message?: string } };
  stepDefinition?: { id: string; pattern: { source: string; type: string } };
}

/** Parses NDJSON text into envelopes; a line that is not JSON is a run error, not a crash. */
function envelopesOf(ndjson: string, errors: string[]): Envelope[] {
  const out: Envelope[] = [];
  ndjson.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as Envelope);
    } catch {
      errors.push(`message stream line ${i + 1} is not JSON (truncated run?)`);
    }
  });
  return out;
}

function worst(a: StepStatus, b: StepStatus): StepStatus {
  return RANK[b] > RANK[a] ? b : a;
}

/** Reads one cucumber run from its message stream. */
export function parseRun(ndjson: string): RunModel {
  const runErrors: string[] = [];
  return runOfEnvelopes(envelopesOf(ndjson, runErrors), runErrors);
}

/**
 * Reads one cucumber run from its envelopes as cucumber emitted them (a run made in this process, @cucumber/messages'
 * Envelope objects): the same as parseRun of the stream they would be written as, without writing and parsing it.
 */
export function parseEnvelopes(envelopes: readonly object[]): RunModel {
  return runOfEnvelopes(envelopes as readonly Envelope[], []);
}

function runOfEnvelopes(envelopes: readonly Envelope[], runErrors: string[]): RunModel {
  const sources: { uri: string; data: string }[] = [];
  const keywords = new Map<string, string>();
  const context = new Map<string, { feature: { name: string; description: string }; rule: string | null }>();
  const pickles: Pickle[] = [];
  const phrases: string[] = [];
  const testCases = new Map<string, TestCase>();
  const latestStart = new Map<string, { id: string; attempt: number }>();
  /** How many times each test case started: more than once only under cucumber's --retry. */
  const starts = new Map<string, number>();
  const results = new Map<string, Map<string, StepResult>>();
  const attachments = new Map<string, RunAttachment[]>();
  let cucumberVersion: string | null = null;
  let finished = false;

  const emptyExamples: RunScenario[] = [];
  const indexChildren = (uri: string, children: AstChild[], feature: { name: string; description: string }, rule: string | null, tags: Tag[]) => {
    for (const child of children) {
      for (const step of child.background?.steps ?? []) keywords.set(step.id, step.keyword);
      if (child.scenario) {
        for (const step of child.scenario.steps) keywords.set(step.id, step.keyword);
        context.set(child.scenario.id, { feature, rule });
        emptyExamples.push(...emptyExamplesOf(uri, child.scenario, feature, rule, tags));
      }
      if (child.rule) indexChildren(uri, child.rule.children, feature, child.rule.name, [...tags, ...(child.rule.tags ?? [])]);
    }
  };

  for (const envelope of envelopes) {
    if (envelope.meta?.implementation) cucumberVersion = envelope.meta.implementation.version;
    if (envelope.source) sources.push({ uri: envelope.source.uri, data: envelope.source.data });
    if (envelope.gherkinDocument?.feature) {
      const { name, description, children, tags } = envelope.gherkinDocument.feature;
      indexChildren(envelope.gherkinDocument.uri ?? '', children, { name, description: description.trim() }, null, tags ?? []);
    }
    if (envelope.pickle) pickles.push(envelope.pickle);
    if (envelope.stepDefinition) phrases.push(envelope.stepDefinition.pattern.source);
    if (envelope.testCase) testCases.set(envelope.testCase.id, envelope.testCase);
    if (envelope.testCaseStarted) {
      const { id, testCaseId, attempt } = envelope.testCaseStarted;
      starts.set(testCaseId, (starts.get(testCaseId) ?? 0) + 1);
      const previous = latestStart.get(testCaseId);
      if (!previous || attempt >= previous.attempt) latestStart.set(testCaseId, { id, attempt });
    }
    if (envelope.testStepFinished) {
      const { testCaseStartedId, testStepId, testStepResult } = envelope.testStepFinished;
      if (!results.has(testCaseStartedId)) results.set(testCaseStartedId, new Map());
      results.get(testCaseStartedId)!.set(testStepId, testStepResult);
    }
    if (envelope.attachment?.testCaseStartedId) {
      const a = envelope.attachment;
      const text = a.contentEncoding === 'BASE64' ? Buffer.from(a.body, 'base64').toString('utf8') : a.body;
      const list = attachments.get(a.testCaseStartedId!) ?? [];
      list.push({ mediaType: a.mediaType, fileName: a.fileName ?? null, text });
      attachments.set(a.testCaseStartedId!, list);
    }
    if (envelope.parseError) {
      const { source, message } = envelope.parseError;
      runErrors.push(`${source.uri ?? '?'}${source.location ? `:${source.location.line}` : ''}: ${message}`);
    }
    if (envelope.testRunFinished) {
      finished = true;
      const { success, message, exception } = envelope.testRunFinished;
      const why = exception?.message ?? message;
      if (!success && why) runErrors.push(`the run reported: ${why}`);
    }
  }
  if (!finished) runErrors.push(`the message stream has no testRunFinished: the run did not complete; ${whereItStopped(envelopes, pickles, testCases, sources)}`);

  const caseOfPickle = new Map([...testCases.values()].map((tc) => [tc.pickleId, tc]));
  const scenarios = pickles.map((pickle): RunScenario => {
    const line = pickle.location?.line ?? 0;
    const where = context.get(pickle.astNodeIds[0]) ?? { feature: { name: '', description: '' }, rule: null };
    const testCase = caseOfPickle.get(pickle.id);
    const started = testCase ? latestStart.get(testCase.id) : undefined;
    const attempts = testCase ? (starts.get(testCase.id) ?? 0) : 0;
    // A retried scenario is read from its last attempt, and a retry is a problem of the run: a scenario that passes only when tried again is flaky, not passed.
    if (attempts > 1) runErrors.push(`${pickle.uri}:${pickle.location?.line ?? 0} "${pickle.name}" ran ${attempts} times (cucumber's retry): a scenario that passes only on a retry is flaky; run without --retry`);
    const stepResults = started ? results.get(started.id) ?? new Map<string, StepResult>() : new Map<string, StepResult>();
    const steps: RunStep[] = [];
    let worstStep: StepStatus = 'PASSED';
    const pickleSteps = new Map(pickle.steps.map((step) => [step.id, step]));
    let seenStep = false;
    for (const testStep of testCase?.testSteps ?? []) {
      const result = stepResults.get(testStep.id);
      const stepStatus = result?.status ?? (started ? 'UNKNOWN' : 'NOT RUN');
      if (stepStatus !== 'NOT RUN') worstStep = worst(worstStep, stepStatus);
      // The error's own message (one plain sentence for an assertion); the stack stays in cucumber's reports.
      const message = result?.exception?.message ?? result?.message?.split('\n    at ')[0] ?? null;
      const pickleStep = testStep.pickleStepId ? pickleSteps.get(testStep.pickleStepId) : undefined;
      if (pickleStep) {
        seenStep = true;
        steps.push({
          kind: 'step',
          keyword: (keywords.get(pickleStep.astNodeIds[0]) ?? '').trim(),
          type: pickleStep.type ?? null,
          text: pickleStep.text,
          table: pickleStep.argument?.dataTable?.rows.map((row) => row.cells.map((cell) => cell.value)) ?? null,
          docString: pickleStep.argument?.docString?.content ?? null,
          status: stepStatus,
          message,
        });
      } else if (stepStatus !== 'PASSED') {
        // Hooks are shown only when they did not pass: they are machinery, not the claim.
        steps.push({ kind: seenStep ? 'after hook' : 'before hook', keyword: '', type: null, text: '', table: null, docString: null, status: stepStatus, message });
      }
    }
    if (!testCase) {
      for (const step of pickle.steps) {
        steps.push({ kind: 'step', keyword: (keywords.get(step.astNodeIds[0]) ?? '').trim(), type: step.type ?? null, text: step.text, table: null, docString: null, status: 'NOT RUN', message: null });
      }
    }
    const own = started ? attachments.get(started.id) ?? [] : [];
    const evidenceAttachments = own.filter((a) => a.mediaType === EVIDENCE_MEDIA_TYPE);
    // Only kvqual's After hook attaches evidence, once: a second one (a step's own) could stand in for what the scenario really did.
    const evidenceAttachment = evidenceAttachments.length === 1 ? evidenceAttachments[0] : undefined;
    let evidence: ScenarioEvidence | null = null;
    let evidenceError: string | null = started ? 'no evidence attached' : null;
    if (evidenceAttachments.length > 1) {
      evidenceError = `evidence attached ${evidenceAttachments.length} times`;
      runErrors.push(`${pickle.uri}:${line} "${pickle.name}" attached its evidence ${evidenceAttachments.length} times: only kvqual's After hook attaches evidence, and a step's own could hide what the scenario really did`);
    }
    if (evidenceAttachment) {
      try {
        evidence = parseEvidence(evidenceAttachment.text);
        evidenceError = null;
      } catch (error) {
        evidenceError = `evidence attachment unreadable: ${(error as Error).message}`;
      }
    }
    const status: ScenarioStatus = started ? worstStep : 'NOT RUN';
    return {
      key: `${pickle.uri}:${line}`,
      uri: pickle.uri,
      line,
      name: pickle.name,
      feature: where.feature,
      rule: where.rule,
      tags: pickle.tags.map((tag) => tag.name),
      steps,
      status,
      evidence,
      evidenceError,
      attachments: own.filter((a) => a.mediaType !== EVIDENCE_MEDIA_TYPE),
      perturbation: own.find((a) => a.fileName === HOOK_ATTACHMENT_FILES.perturbation)?.text ?? null,
    };
  });
  scenarios.push(...emptyExamples);
  scenarios.sort((a, b) => compareText(a.uri, b.uri) || a.line - b.line);
  sources.sort((a, b) => compareText(a.uri, b.uri));
  return { scenarios, sources, cucumberVersion, phrases, runErrors, finished };
}

/**
 * A stand-in (see RunScenario.emptyExamples) for each Examples table of an outline that has no rows:
 * Gherkin makes no scenario of it. An outline with no Examples at all is a plain scenario to Gherkin.
 */
function emptyExamplesOf(uri: string, outline: AstScenario, feature: { name: string; description: string }, rule: string | null, tags: Tag[]): RunScenario[] {
  return outline.examples
    .filter((examples) => (examples.tableBody ?? []).length === 0)
    .map((examples) => {
      const line = examples.location?.line ?? outline.location?.line ?? 0;
      const why = `its ${(examples.keyword ?? 'Examples').trim()} table (line ${line}) has no rows, so the outline "${outline.name}" made no scenario of it: nothing it claims was checked`;
      return {
        key: `${uri}:${line}`,
        uri,
        line,
        name: outline.name,
        feature,
        rule,
        tags: [...tags, ...outline.tags, ...(examples.tags ?? [])].map((tag) => tag.name),
        steps: outline.steps.map((step) => ({ kind: 'step' as const, keyword: step.keyword.trim(), type: null, text: step.text ?? '', table: null, docString: null, status: 'NOT RUN' as const, message: null })),
        status: 'NOT RUN',
        evidence: null,
        evidenceError: null,
        attachments: [],
        perturbation: null,
        emptyExamples: why,
      };
    });
}

/**
 * Where a run that did not finish stopped, from what its stream shows, so that the sign-off names
 * the culprit rather than only "not run": a scenario of the sources without steps (cucumber's
 * reports break on one), else the scenario (and step) that started and never finished, else the
 * last scenario that finished (what broke came after it: a hook between scenarios, an AfterAll
 * hook, an error thrown outside any step such as a late assertion), else that no scenario started.
 * The driver adds cucumber's own last words (runLastWords).
 */
export function whereItStopped(envelopes: readonly Envelope[], pickles: readonly Pickle[], testCases: ReadonlyMap<string, TestCase>, sources: readonly { uri: string; data: string }[]): string {
  const pickleOfCase = new Map([...testCases.values()].map((tc) => [tc.id, pickles.find((p) => p.id === tc.pickleId)]));
  const started = new Map<string, Pickle | undefined>();
  const finishedCases = new Set<string>();
  const lastStep = new Map<string, string>();
  let lastFinished: Pickle | undefined;
  for (const envelope of envelopes) {
    if (envelope.testCaseStarted) started.set(envelope.testCaseStarted.id, pickleOfCase.get(envelope.testCaseStarted.testCaseId));
    if (envelope.testStepStarted) lastStep.set(envelope.testStepStarted.testCaseStartedId, envelope.testStepStarted.testStepId);
    if (envelope.testStepFinished) lastStep.delete(envelope.testStepFinished.testCaseStartedId);
    if (envelope.testCaseFinished) {
      finishedCases.add(envelope.testCaseFinished.testCaseStartedId);
      lastFinished = started.get(envelope.testCaseFinished.testCaseStartedId) ?? lastFinished;
    }
  }
  const named = (pickle: Pickle | undefined) => (pickle ? `"${pickle.name}" (${pickle.uri}:${pickle.location?.line ?? 0})` : 'a scenario the stream does not name');
  const stepless = sources.flatMap((source) => steplessScenarios(source.uri, source.data));
  if (stepless.length > 0) return `${stepless.length === 1 ? 'a scenario has' : `${stepless.length} scenarios have`} no steps, on which cucumber's reports break: ${stepless.join(', ')}`;
  // A stream written to the end of a process that was stopped may lack its last lines: what it shows last is where to look, not proof.
  const open = [...started.keys()].filter((id) => !finishedCases.has(id));
  if (open.length > 0) {
    const id = open[open.length - 1];
    const pickle = started.get(id);
    const stepId = lastStep.get(id);
    const testStep = stepId === undefined ? undefined : [...testCases.values()].flatMap((tc) => tc.testSteps).find((step) => step.id === stepId);
    const pickleStep = testStep?.pickleStepId === undefined ? undefined : pickle?.steps.find((step) => step.id === testStep.pickleStepId);
    const during = stepId === undefined ? '' : pickleStep ? ` during its step "${pickleStep.text}"` : ' during one of its hooks';
    return `the stream ends in the scenario ${named(pickle)}${during} (the process may have gone a little further: look there, at the hooks after it, an AfterAll hook, or an error thrown outside any step)`;
  }
  if (lastFinished !== undefined) return `the stream ends after the scenario ${named(lastFinished)} had finished: in a hook after it (an AfterAll hook), or on an error thrown outside any step (a late assertion of a scenario before it)`;
  return 'the stream ends before any scenario started (in a BeforeAll hook, or while loading the steps)';
}

const BLOCK_KEYWORD = /^\s*(Feature|Rule|Background|Scenario Outline|Scenario Template|Scenario|Example|Examples|Scenarios)\s*:/;
const SCENARIO_KEYWORD = /^\s*(Scenario Outline|Scenario Template|Scenario|Example)\s*:\s*(.*)$/;
const STEP_KEYWORD = /^\s*(Given|When|Then|And|But|\*)\s/;

/** The scenarios of an English feature file written without a step, as `uri:line "name"` (a light read of the text: the run's stream may hold nothing else). */
export function steplessScenarios(uri: string, text: string): string[] {
  const found: string[] = [];
  let open: { line: number; name: string } | null = null;
  const close = () => {
    if (open !== null) found.push(`${uri}:${open.line} "${open.name}"`);
    open = null;
  };
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    if (STEP_KEYWORD.test(line)) open = null;
    else if (BLOCK_KEYWORD.test(line)) {
      close();
      const scenario = SCENARIO_KEYWORD.exec(line);
      if (scenario) open = { line: i + 1, name: scenario[2].trim() };
    }
  });
  close();
  return found;
}

/** The last lines cucumber printed, for a run whose stream did not finish: its own account of what stopped it. */
export function runLastWords(output: string): string | null {
  const lines = output
    .split(/\r\n|\r|\n/)
    // Cucumber's progress marks (one character a step) run on into the line that follows them.
    .map((line) => line.trim().replace(/^[.FUP?-]+(?=[A-Za-z])/, ''))
    .filter((line) => line !== '' && !line.startsWith('at ') && !/^[.FUP?-]+$/.test(line));
  const error = lines.findIndex((line) => /(^|\s)(Error|AssertionError|TypeError|RangeError)\b.*:/.test(line) || /errored|exiting/.test(line));
  const shown = error >= 0 ? lines.slice(error, error + 3) : lines.slice(-3);
  return shown.length > 0 ? `cucumber's last words: ${shown.join(' / ')}` : null;
}
