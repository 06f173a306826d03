import fc from 'fast-check';
import { fuzzCaseArbitrary, KNOWN_DEFECT_AREAS, parseDefectAreas } from '../src/fuzz/generate';
import { runCase } from '../src/fuzz/runCase';
const exclude = parseDefectAreas(process.argv[2]);
const counts: Record<string, number> = {};
const samples = fc.sample(fuzzCaseArbitrary({ exclude }), { numRuns: Number(process.argv[3] ?? 300), seed: Number(process.argv[4] ?? 42) });
for (const c of samples) {
  const v = runCase(c);
  const kinds = new Set(v.violations.map((x) => x.invariant + ': ' + x.message.replace(/request \S+/, 'request X').replace(/[\d.]+/g, 'N').slice(0, 140)));
  for (const k of kinds) { counts[k] = (counts[k] ?? 0) + 1; }
}
for (const [k, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) console.log(n, k);
