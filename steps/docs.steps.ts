// Steps about the documents a reader signs off with the scenarios: the shared-pool contract page
// (G2-10) has a section for every clause the qualification names, and every feature file it cites
// as qualifying a clause exists. What was read is recorded as the scenario's computation.
import { Then, When } from './support/catalogue';
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { KvWorld } from './support/world';

/** The repository: the nearest folder above these steps with a package.json (compiled, they run from build/steps/). */
const ROOT = repositoryRoot(__dirname);

function repositoryRoot(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

interface ReadDocument {
  file: string;
  sections: string[];
  cited_features: string[];
}

/** The document this scenario read (kept as its computation, so nothing is carried from one scenario to another). */
function documentOf(world: KvWorld): ReadDocument {
  if (world.computation?.kind !== 'document') throw new Error("this step checks the document a When such as 'When the shared-pool contract page docs/shared-g2-pool.md is read' read, and none was read");
  return world.computation!.record as unknown as ReadDocument;
}

When('the shared-pool contract page {word} is read', { domain: 'documents', level: 'either', says: 'Reads a document of the repository (its sections and the feature files it cites).' }, function (this: KvWorld, file: string) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const sections = [...text.matchAll(/^## (.+)$/gm)].map((match) => match[1].trim().toLowerCase());
  const cited = [...new Set([...text.matchAll(/`((?:features\/[\w/-]+\/)?[\w-]+\.feature)`/g)].map((match) => match[1]))].sort();
  const read: ReadDocument = { file, sections, cited_features: cited };
  this.recordComputation('document', { ...read });
});

Then('it has a section for each of {string}', { domain: 'documents', level: 'either', says: 'Checks the document has a section headed by each of these comma-separated clauses.' }, function (this: KvWorld, list: string) {
  const expected = list.split(',').map((item) => item.trim().toLowerCase());
  const { sections } = documentOf(this);
  this.measure('clauses with a section', expected.filter((clause) => sections.includes(clause)).length, 'sections', `${expected.filter((clause) => sections.includes(clause)).length} of ${expected.length} clauses have a section`);
  expect(expected.filter((clause) => !sections.includes(clause)), `clauses without a section (sections: ${sections.join(', ')})`).to.deep.equal([]);
});

Then('every feature file it cites exists, at least {int} of them', { domain: 'documents', level: 'either', says: 'Checks the document cites at least this many feature files and every one exists.' }, function (this: KvWorld, least: number) {
  const { cited_features } = documentOf(this);
  const resolved = cited_features.map((cited) => (cited.startsWith('features/') ? cited : findFeature(cited)));
  this.measure('feature files cited', cited_features.length, 'files');
  expect(cited_features.length, `feature files the page cites: ${cited_features.join(', ')}`).to.be.at.least(least);
  expect(cited_features.filter((_, i) => resolved[i] === null || !fs.existsSync(path.join(ROOT, resolved[i]!))), 'cited feature files that do not exist').to.deep.equal([]);
});

/** A feature file named without its folder: where under features/ it is, or null. */
function findFeature(name: string): string | null {
  const found = fs.readdirSync(path.join(ROOT, 'features'), { recursive: true, encoding: 'utf8' }).find((file) => path.basename(file) === name);
  return found === undefined ? null : path.join('features', found);
}
