// Scenario hooks: every failing scenario prints its seed and a one-line command that replays
// exactly it; every scenario attaches the router's decisions in plain words as evidence.
import { After, Status } from '@cucumber/cucumber';
import type { KvWorld } from './world';
import { explainPlacement } from '../../src/router/explain';

After(function (this: KvWorld, { pickle, result }) {
  const decisions = this.hasReplay ? this.replay.placements.map(explainPlacement) : [];
  if (decisions.length > 0) this.attach(decisions.join('\n'), 'text/plain');
  if (result?.status === Status.PASSED) return;
  const line = pickle.location?.line;
  const target = line === undefined ? pickle.uri : `${pickle.uri}:${line}`;
  const replay = `KVQUAL_SEED=${this.seed} npx cucumber-js ${target}`;
  const note = `seed ${this.seed} — replay only this scenario with:\n  ${replay}`;
  this.attach(note, 'text/plain');
  process.stderr.write(`\n✗ ${pickle.name}\n  ${note.replace('\n', '\n')}\n`);
});
