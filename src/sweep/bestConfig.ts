// The winning config of a capacity search (best.yaml in a sweep's folder): the base config's text
// with the winning point's fields set (comments kept), and the files it names (a trace, a pass-time
// table) named again from the folder it is written to, so `kvqual replay best.yaml` runs the
// winning point from there.
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { parseFieldPath } from './spec';

/** The fields of a config that name a file, relative to the config's folder. */
function fileFields(raw: Record<string, unknown>): (string | number)[][] {
  const fields: (string | number)[][] = [['workload', 'mooncake', 'trace'], ['workload', 'agentic', 'trace']];
  const workers = (raw.cluster as { workers?: unknown } | undefined)?.workers;
  if (Array.isArray(workers)) workers.forEach((_, i) => fields.push(['cluster', 'workers', i, 'engine', 'timing', 'table', 'csv']));
  return fields;
}

/**
 * The base config's text with `parameters` set (a seed varied by the sweep is left as the base
 * gives it: the winner met the constraints under every seed), its file paths relative to `folder`.
 */
export function bestConfigText(baseText: string, baseFolder: string, folder: string, parameters: Record<string, unknown>, what: string): string {
  const document = parseDocument(baseText, { uniqueKeys: true });
  for (const [field, value] of Object.entries(parameters)) if (field !== 'seed') document.setIn(parseFieldPath(field), value);
  const raw = document.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  for (const field of fileFields(raw)) {
    const value = document.getIn(field);
    if (typeof value === 'string' && !path.isAbsolute(value)) document.setIn(field, path.relative(folder, path.resolve(baseFolder, value)).split(path.sep).join('/'));
  }
  const set = Object.entries(parameters).filter(([field]) => field !== 'seed');
  const header = ` The winning config of ${what}: ${set.length === 0 ? 'the base config' : set.map(([field, value]) => `${field}=${JSON.stringify(value)}`).join(', ')}.\n Replay it with kvqual replay; the files it names are relative to this file's folder.`;
  document.commentBefore = document.commentBefore ? `${header}\n${document.commentBefore}` : header;
  return document.toString();
}
