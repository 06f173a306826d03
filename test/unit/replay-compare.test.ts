// `kvqual replay CONFIG --compare path=value …` (A/B in one command): the baseline and each
// variant run on the same trace and seed as separate replays would, one table compares them with
// ratios to the baseline, every run's outputs are written under the variant's name, and a bad
// field path or value is refused (exit 2) before anything runs or is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { kvqualInProcess } from '../support/cli';
import { fileNamed, ratioText, variantNames } from '../../src/cli/compare';

const EXAMPLE = path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml');

function withFolder(body: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kvqual-compare-'));
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the baseline and a variant run as two replays would, and one table gives each figure with its ratio to the baseline', () => {
  withFolder((dir) => {
    const out = path.join(dir, 'report.json');
    const requests = path.join(dir, 'requests.csv');
    const run = kvqualInProcess(['replay', EXAMPLE, '--compare', 'router.policy=round_robin', '--out', out, '--requests-out', requests]);
    assert.equal(run.status, 0, run.stderr);
    const baseline = JSON.parse(readFileSync(out, 'utf8'));
    const variant = JSON.parse(readFileSync(path.join(dir, 'report.policy-round_robin.json'), 'utf8'));
    assert.ok(existsSync(path.join(dir, 'requests.policy-round_robin.csv')), 'the variant wrote its requests under its name');
    // The same runs as plain replays: the config as given, and the config with the field set.
    const plain = JSON.parse(kvqualInProcess(['replay', EXAMPLE, '--json']).stdout);
    const edited = path.join(dir, 'round-robin.yaml');
    const text = readFileSync(EXAMPLE, 'utf8');
    assert.match(text, /^ {2}policy: kv$/m);
    writeFileSync(edited, text.replace(/^ {2}policy: kv$/m, '  policy: round_robin'));
    const roundRobin = JSON.parse(kvqualInProcess(['replay', edited, '--json']).stdout);
    assert.equal(baseline.digest, plain.digest);
    assert.equal(variant.digest, roundRobin.digest);
    assert.notEqual(variant.digest, baseline.digest, 'the variant changed something');
    const header = run.stdout.split('\n')[1];
    assert.match(header, /metric\s+unit\s+baseline\s+router\.policy=round_robin\s+÷ baseline/);
    const ttft = run.stdout.split('\n').find((line) => line.includes('time to first token mean'))!;
    const [b, v] = [baseline, variant].map((report) => report.summary.metrics.time_to_first_token_ms.mean);
    assert.ok(ttft.trimEnd().endsWith(ratioText(v, b)), ttft);
    assert.match(run.stdout, new RegExp(`router.policy=round_robin: .*digest ${variant.digest}; report written to .*report.policy-round_robin.json`));
  });
});

test('a bad field path or value is refused before anything runs: exit 2, the --compare named, nothing written', () => {
  withFolder((dir) => {
    const out = path.join(dir, 'report.json');
    const cases: [string, RegExp][] = [
      ['router.policy=fastest', /^kvqual replay: --compare router\.policy=fastest: router\.policy: /],
      ['router.polcy=kv', /^kvqual replay: --compare router\.polcy=kv: router\.polcy: unknown field/],
      ['cluster.workers[3].replicas=2', /^kvqual replay: --compare cluster\.workers\[3\]\.replicas=2: cluster\.workers\[3\]\.replicas: cluster\.workers has 1 entry, so \[3\] does not exist/],
      ['router.policy', /^kvqual replay: --compare router\.policy: expected field\.path=value/],
      ['router..policy=kv', /is not a field path/],
      ['router.kv_event_lag_ms=[1, 2]', /a value is a finite number, a string, true, false or null/],
    ];
    for (const [spec, message] of cases) {
      // A good variant first: it must not run either.
      const run = kvqualInProcess(['replay', EXAMPLE, '--compare', 'router.policy=round_robin', '--compare', spec, '--out', out]);
      assert.equal(run.status, 2, spec);
      assert.match(run.stderr, message, spec);
      assert.equal(run.stdout, '', spec);
      assert.deepEqual(readdirSync(dir), [], `${spec}: nothing written`);
    }
  });
});

test('--json with --compare, a variant given twice and an output folder that is missing are refused before any run', () => {
  withFolder((dir) => {
    const json = kvqualInProcess(['replay', EXAMPLE, '--compare', 'router.policy=round_robin', '--json']);
    assert.equal(json.status, 2);
    assert.match(json.stderr, /--json prints one run's report; with --compare, --out writes every run's report/);
    const twice = kvqualInProcess(['replay', EXAMPLE, '--compare', 'seed=2', '--compare', 'seed=2']);
    assert.equal(twice.status, 2);
    assert.match(twice.stderr, /--compare seed=2 is given twice/);
    const missing = kvqualInProcess(['replay', EXAMPLE, '--compare', 'seed=2', '--out', path.join(dir, 'no', 'r.json')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--out .*r\.json: the folder .* does not exist/);
    assert.deepEqual(readdirSync(dir), []);
  });
});

test("a variant's files take its field's last name and value, or its whole path where two would clash", () => {
  assert.equal(fileNamed(path.join('out', 'report.json'), 'policy-round_robin'), path.join('out', 'report.policy-round_robin.json'));
  assert.equal(fileNamed('requests.csv', 'replicas-4'), 'requests.replicas-4.csv');
  assert.deepEqual(variantNames([{ path: 'router.policy', value: 'round_robin' }, { path: 'cluster.workers[0].replicas', value: 4 }]), ['policy-round_robin', 'replicas-4']);
  assert.deepEqual(
    variantNames([{ path: 'cluster.workers[0].replicas', value: 4 }, { path: 'cluster.workers[1].replicas', value: 4 }]),
    ['cluster.workers_0_.replicas-4', 'cluster.workers_1_.replicas-4'],
  );
  assert.equal(ratioText(3, 0), '-', 'no ratio to a baseline of 0');
  assert.equal(ratioText(null, 2), '-');
  assert.equal(ratioText(1, 4), '×0.25');
});
