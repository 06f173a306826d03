// The requirement registry (requirements.yaml: id, title, source, owner, status) and the
// traceability rules between it and the scenarios' tags: every scenario carries a registered
// requirement tag (its own, or its Feature's / Rule's / Examples'), no requirement-like tag names
// an unknown requirement, and every registered requirement has a scenario. Pure: the caller
// supplies the scenarios (from cucumber's Gherkin compiler or from a run's message stream).
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { collectionKeyAt } from '../inputFiles';
import { compareText } from '../order';

/** A tag that names a requirement or rule id: `@AISIM-1893`, `@LAG-1`, `@G2-10`. */
export const REQUIREMENT_TAG = /^@[A-Z][A-Z0-9]*-\d+$/;

const requirementSchema = z.strictObject({
  id: z.string().regex(/^[A-Z][A-Z0-9]*-\d+$/, 'an id looks like AISIM-1893 or LAG-1'),
  title: z.string().min(1),
  source: z.string().min(1),
  owner: z.string().min(1),
  /** `planned`: its scenarios are still being written; the lint warns instead of failing. */
  status: z.enum(['active', 'planned']).default('active'),
});

const registrySchema = z.strictObject({ requirements: z.array(requirementSchema).min(1) });

export type Requirement = z.infer<typeof requirementSchema>;
export interface Registry {
  requirements: Requirement[];
}

/** Parses and validates a registry; errors name the file and the offending entry. */
export function parseRegistry(text: string, where = 'requirements.yaml'): Registry {
  let raw: unknown;
  try {
    const document = parseDocument(text, { uniqueKeys: true });
    if (document.errors.length > 0) throw document.errors[0];
    const collectionKey = collectionKeyAt(document, text);
    if (collectionKey) throw new Error(`a key must be a name, not a list or a map (line ${collectionKey.line}, column ${collectionKey.column})`);
    raw = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new Error(`${where}: not valid YAML: ${(error as Error).message}`);
  }
  const result = registrySchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(top)'}: ${issue.message}`);
    throw new Error(`${where}: invalid requirement registry:\n${problems.join('\n')}`);
  }
  const seen = new Set<string>();
  for (const requirement of result.data.requirements) {
    if (seen.has(requirement.id)) throw new Error(`${where}: requirement ${requirement.id} is listed twice`);
    seen.add(requirement.id);
  }
  return result.data;
}

/** A scenario as the traceability check sees it (one per Scenario, one per Examples row). */
export interface TracedScenario {
  name: string;
  uri: string;
  line: number;
  /** All its tags, inherited ones included, with the leading `@`. */
  tags: string[];
}

export type FindingKind = 'untraced-scenario' | 'unknown-tag' | 'uncovered-requirement' | 'planned-requirement';

export interface TraceFinding {
  severity: 'error' | 'warning';
  kind: FindingKind;
  message: string;
  requirement: string | null;
  scenario: TracedScenario | null;
}

export interface TraceRow {
  requirement: Requirement;
  scenarios: TracedScenario[];
}

export interface Traceability {
  rows: TraceRow[];
  findings: TraceFinding[];
  errors: number;
  warnings: number;
}

function where(scenario: TracedScenario): string {
  return `${scenario.uri}:${scenario.line}`;
}

/** Checks the scenarios against the registry and maps each requirement to its scenarios. */
export function traceRequirements(registry: Registry, scenarios: TracedScenario[]): Traceability {
  const known = new Map(registry.requirements.map((r) => [`@${r.id}`, r]));
  const findings: TraceFinding[] = [];
  const covered = new Map<string, TracedScenario[]>(registry.requirements.map((r) => [r.id, []]));
  const sorted = [...scenarios].sort((a, b) => compareText(a.uri, b.uri) || a.line - b.line);
  for (const scenario of sorted) {
    const tags = [...new Set(scenario.tags)];
    const unknown = tags.filter((tag) => REQUIREMENT_TAG.test(tag) && !known.has(tag));
    for (const tag of unknown) {
      findings.push({
        severity: 'error',
        kind: 'unknown-tag',
        message: `${where(scenario)} "${scenario.name}": tag ${tag} names no requirement in the registry`,
        requirement: tag.slice(1),
        scenario,
      });
    }
    const traced = tags.filter((tag) => known.has(tag));
    if (traced.length === 0) {
      findings.push({
        severity: 'error',
        kind: 'untraced-scenario',
        message: `${where(scenario)} "${scenario.name}": no requirement tag (tag it, its Rule, Feature or Examples, e.g. @AISIM-1893)`,
        requirement: null,
        scenario,
      });
    }
    for (const tag of traced) covered.get(tag.slice(1))!.push(scenario);
  }
  const rows = registry.requirements.map((requirement) => ({ requirement, scenarios: covered.get(requirement.id)! }));
  for (const { requirement, scenarios: its } of rows) {
    if (its.length > 0) continue;
    const planned = requirement.status === 'planned';
    findings.push({
      severity: planned ? 'warning' : 'error',
      kind: planned ? 'planned-requirement' : 'uncovered-requirement',
      message: planned
        ? `${requirement.id} "${requirement.title}" is planned and has no scenario yet (a sign-off stays NOT QUALIFIED until it has)`
        : `${requirement.id} "${requirement.title}" has no scenario`,
      requirement: requirement.id,
      scenario: null,
    });
  }
  const errors = findings.filter((f) => f.severity === 'error').length;
  return { rows, findings, errors, warnings: findings.length - errors };
}

/** Requirements without any scenario, planned or not: a sign-off cannot cover them. */
export function uncoveredRequirements(trace: Traceability): Requirement[] {
  return trace.rows.filter((row) => row.scenarios.length === 0).map((row) => row.requirement);
}
