// End-to-end tests of `npm run qualify` on fixture suites run through cucumber with the real
// steps: a clean run is QUALIFIED and exits 0; the same run twice gives the same report apart
// from the date line; the perturbation test double flips the verdict and names the scenario; an
// undefined step, an untagged scenario and an unknown tag are listed and make it NOT QUALIFIED;
// and signoff.html, opened from disk in headless Chromium, renders with its matrix and figures
// and shows a hostile scenario name as text. The browser test is skipped without Chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';

const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '<script>alert(1)</script> an arrival at 15 ms sees the store';
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-signoff-'));

interface Qualified {
  status: number | null;
  output: string;
  markdown: string;
  html: string;
  dir: string;
}

function qualify(fixture: string, out: string, env: NodeJS.ProcessEnv = {}): Promise<Qualified> {
  const dir = path.join(scratch, out);
  const args = [
    '--require',
    'tsx/cjs',
    'scripts/qualify.ts',
    '--features',
    `test/fixtures/${fixture}/features`,
    '--requirements',
    `test/fixtures/${fixture}/requirements.yaml`,
    '--out',
    dir,
    '--campaign',
    'sign-off fixture',
    '--no-coverage',
    '--fuzz-runs',
    '50',
  ];
  const childEnv = { ...process.env, ...env };
  if (!('KVQUAL_PERTURB' in env)) delete childEnv.KVQUAL_PERTURB;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');
      resolve({ status, output, markdown: read('signoff.md'), html: read('signoff.html'), dir });
    });
  });
}

let clean: Qualified;
let cleanAgain: { markdown: string; html: string };
let perturbed: Qualified;
let broken: Qualified;

before(async () => {
  // Two runs at a time on two cores; the repeat of the clean run writes to the same place.
  [clean, perturbed] = await Promise.all([qualify('signoff', 'clean'), qualify('signoff', 'perturbed', { KVQUAL_PERTURB: '14.999 ms' })]);
  const first = { markdown: clean.markdown, html: clean.html };
  [broken] = await Promise.all([qualify('signoff-broken', 'broken'), qualify('signoff', 'clean').then((again) => (cleanAgain = again))]);
  clean = { ...clean, ...first };
});

after(() => fs.rmSync(scratch, { recursive: true, force: true }));

test('a clean fixture run is QUALIFIED, exits 0, and keeps cucumber\'s reports beside the sign-off', () => {
  assert.equal(clean.status, 0, clean.output);
  assert.match(clean.markdown, /\| Verdict \| \*\*QUALIFIED\*\* ✅ \|/);
  for (const name of ['signoff.md', 'signoff.html', 'cucumber.html', 'junit.xml', 'messages.ndjson']) {
    assert.ok(fs.existsSync(path.join(clean.dir, name)), `${name} is written`);
  }
  const assets = fs.readdirSync(path.join(clean.dir, 'signoff-assets'));
  assert.equal(assets.length, 3);
  for (const asset of assets) assert.ok(clean.markdown.includes(`](signoff-assets/${asset})`), `signoff.md links ${asset}`);
  assert.match(clean.markdown, /host blocks counted on worker 1 = 4 \(the whole 4-block prefix\)/);
  assert.match(clean.markdown, /\| Generated workloads \| 50 generated workloads \(fast-check seed 1893\) kept every invariant.* \| ✅ \|/);
  assert.match(clean.markdown, /r2 placed on worker 1 at 15 ms: 4 host block\(s\), cost 9 vs 10 on worker 0 — host blocks visible to the router since 15 ms \(emitted at 10 ms\)/);
  assert.ok(!fs.readdirSync(clean.dir).some((name) => name.startsWith('.')), 'no temporary file is left behind');
});

test('the same run twice gives the same report apart from the date line', () => {
  for (const kind of ['markdown', 'html'] as const) {
    const one = clean[kind].split('\n');
    const two = cleanAgain[kind].split('\n');
    assert.equal(one.length, two.length, kind);
    const differing = one.map((line, i) => [line, two[i]]).filter(([a, b]) => a !== b);
    assert.ok(differing.length <= 1, `${kind}: only the date line may differ, got ${JSON.stringify(differing).slice(0, 400)}`);
    for (const [line] of differing) assert.match(line, /Date/);
  }
});

test('the perturbation test double flips the verdict to NOT QUALIFIED and names the scenario', () => {
  assert.equal(perturbed.status, 1, perturbed.output);
  assert.match(perturbed.markdown, /\*\*NOT QUALIFIED\*\*/);
  assert.match(perturbed.markdown, /\| Determinism \| 1 scenario differed between the two runs: "an arrival at 14\.999 ms does not see the store" \| ❌ \|/);
  assert.match(perturbed.markdown, /digests differ: KV batches: 1 vs 2/);
  assert.match(perturbed.markdown, /TEST DOUBLE ACTIVE/);
  assert.ok(fs.existsSync(path.join(perturbed.dir, 'messages-rerun.ndjson')), 'the second run is kept for the inquiry');
  assert.match(perturbed.markdown, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'the perturbed scenario still passes: only the digest tells');
});

test('undefined and skipped steps, untagged scenarios, unknown tags and uncovered requirements are listed, never passed', () => {
  assert.equal(broken.status, 1, broken.output);
  const md = broken.markdown;
  assert.match(md, /\| Scenarios \| 2 of 3 scenarios passed \(1 undefined\) \| ❌ \|/);
  assert.match(md, /- \*\*undefined\*\*: \[a step nobody defined\]/);
  assert.match(md, /\| When something nobody wrote a step for happens \| undefined \|/);
  assert.match(md, /\| Then the replay completes without a stream error \| skipped \|/);
  assert.match(md, /### Scenarios without a requirement tag\n\n- \[a scenario without a requirement tag\]/);
  assert.match(md, /- @AISIM-4242 on \[a tag naming a requirement nobody registered\]/);
  assert.match(md, /### Requirements without a scenario\n\n- \*\*LAG-2\*\*/);
});

const noChromium = !fs.existsSync(CHROMIUM);

test('signoff.html opens from disk in Chromium: verdict, matrix, figures, hostile names as text', { skip: noChromium ? 'skipped: chromium not installed' : false }, async () => {
  // Loaded lazily so that the rest of this file runs where playwright-core cannot start a browser.
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await context.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    const url = `file://${path.join(clean.dir, 'signoff.html')}`;
    await page.goto(url, { waitUntil: 'load' });

    assert.equal((await page.locator('#verdict .word').textContent())?.trim(), 'QUALIFIED');
    const matrix = page.locator('#traceability-matrix');
    assert.ok(await matrix.isVisible(), 'the traceability matrix is visible');
    assert.ok((await matrix.locator('tbody tr').count()) >= 6, 'one row per requirement and scenario');
    const figures = page.locator('figure.timeline svg');
    assert.ok((await figures.count()) >= 1, 'at least one timeline image');
    const box = await figures.first().boundingBox();
    assert.ok(box !== null && box.width > 300 && box.height > 200, `the timeline has a size (${JSON.stringify(box)})`);

    const headings = await page.locator('section.scenario h4').allTextContents();
    assert.ok(headings.some((text) => text.includes(HOSTILE)), `the hostile name is shown as text: ${JSON.stringify(headings)}`);
    assert.ok((await matrix.textContent())!.includes(HOSTILE), 'and as text in the matrix');
    assert.ok((await page.locator('body').textContent())!.includes('a prefix named <img src=x onerror=alert(2)> is only text'));
    assert.equal(await page.locator('script').count(), 0, 'no script element in the page');
    assert.equal(await page.locator('main img').count(), 0, 'no injected image element');
    assert.deepEqual(dialogs, [], 'no script ran');
    assert.deepEqual(errors, []);
    assert.deepEqual(requests.filter((r) => r !== url), [], 'the page loads nothing besides itself');
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
