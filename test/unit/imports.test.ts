// The module graph of src/, steps/ and scripts/ has no cycle (type-only imports included): each
// folder builds on the ones below it. src/replay.ts assembles config, simulation, agentic driver
// and run report, so nothing under those imports it; the World and the engine-level scenario share
// their setup type through steps/support/setup.ts instead of importing each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

function sources(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return fs.readdirSync(full, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f).split(path.sep).join('/'));
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*'(\.[^']+)'/g)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]));
    for (const candidate of [`${target}.ts`, `${target}/index.ts`]) {
      if (fs.existsSync(path.join(ROOT, candidate))) out.push(candidate);
    }
  }
  return out;
}

/** The cycles of the graph, each as the list of files around it. */
export function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

test('src/, steps/ and scripts/ import one another without a cycle', () => {
  const files = [...sources('src'), ...sources('steps'), ...sources('scripts')];
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  assert.ok(graph.size > 50, `read ${graph.size} modules`);
  assert.deepEqual(cyclesOf(graph).map((c) => c.join(' → ')), []);
});

test('src/replay.ts is above what it assembles: nothing under src/ imports it except the command line (replay, the sweep worker), the fuzzer that drives replays and the SLO scenarios\' trace runs', () => {
  const importers = sources('src').filter((f) => importsOf(f).includes('src/replay.ts'));
  assert.deepEqual(importers, ['src/cli/replay.ts', 'src/cli/sweepWorker.ts', 'src/fuzz/invariants.ts', 'src/fuzz/runCase.ts', 'src/slo/traceRun.ts']);
});
