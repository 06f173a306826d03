import fc from 'fast-check';
import * as fs from 'node:fs';
import { fuzzCaseArbitrary, parseDefectAreas } from '../src/fuzz/generate';
import { runCase } from '../src/fuzz/runCase';
import { caseFiles } from '../src/fuzz/scenario';
const pattern = new RegExp(process.argv[3]);
const r = fc.check(fc.property(fuzzCaseArbitrary({ exclude: parseDefectAreas(process.argv[2]) }), (c) => !runCase(c).violations.some((v) => pattern.test(v.message))), { numRuns: 20000, seed: 5 });
if (!r.failed) { console.log('none'); process.exit(0); }
const origin = { seed: r.seed, path: r.counterexamplePath! };
const violations = runCase(r.counterexample![0]).violations;
const files = caseFiles(r.counterexample![0], { origin, violations, folder: 'reports/fuzz' });
for (const f of [files.config, files.trace, files.feature]) if (f) fs.writeFileSync('reports/fuzz/' + f.name, f.content);
console.log(origin, files.config.name); for (const v of violations) console.log(v.message);
