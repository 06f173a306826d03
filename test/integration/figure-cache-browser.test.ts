// A poisoned figure cache cannot turn a NOT QUALIFIED signoff.html green, in headless Chromium.
// The sign-off of a run with a failing scenario is rendered with its figures taken through a real
// folder cache whose entries were forged: by someone without the cache's secret (the old plain
// SHA-256 seal, a page-wide <style>), and by code holding it (a <style>, a <foreignObject> page,
// an onload script, and a drawing of a green "QUALIFIED" as large as it can be made). The page
// still reads NOT QUALIFIED on a red verdict, no style but its own applies, nothing runs, and the
// drawing stays inside its figure. A style element and attribute put into the page behind the
// sanitiser's back are not applied either (the CSP has no 'unsafe-inline'). Skipped without
// Chromium.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { figureCacheKey, figureSpec, renderFigure } from '../../src/report/figure';
import { anchorsOf, buildSignoff } from '../../src/signoff/model';
import { renderHtml } from '../../src/signoff/html';
import { folderFigureCache, SECRET_FILE } from '../../steps/support/figureCache';
import { lagEvidence, SCENARIO_KEYS, signoffInputOf } from '../support/signoffInput';

const CHROMIUM = '/usr/bin/chromium';
const browserTest = { skip: fs.existsSync(CHROMIUM) ? false : 'skipped: chromium not installed' };
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-figure-poison-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** CSS that would make the page read QUALIFIED in green, were it applied. */
const GREEN = '#verdict { background: rgb(0, 128, 0) !important; } #verdict .word { visibility: hidden; } #verdict::after { content: "QUALIFIED"; } .badge.bad { background: rgb(0, 128, 0) !important; }';

/** A forged entry as the old cache sealed it (a plain SHA-256 of the SVG): what anyone could write. */
function plainlySealed(svg: string): string {
  return `${svg}\n<!-- kvqual figure cache sha256:${createHash('sha256').update(svg).digest('hex')} -->\n`;
}

/** A forged entry sealed with the folder's own secret (code that can read it), under the file name the cache uses. */
function forgeWithSecret(folder: string, key: string, svg: string): void {
  const secret = fs.readFileSync(path.join(folder, SECRET_FILE));
  const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
  fs.writeFileSync(path.join(folder, `${hmac(key)}.svg`), `${svg}\n<!-- kvqual figure cache hmac-sha256:${hmac(`${key}\n${svg}`)} -->\n`);
}

const SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg"';
const POISONS: [string, string][] = [
  ['a page-wide <style>', `${SVG_OPEN} width="10" height="10"><style>${GREEN}</style></svg>`],
  ['a <foreignObject> page', `${SVG_OPEN} width="900" height="300"><foreignObject width="900" height="300"><div xmlns="http://www.w3.org/1999/xhtml" style="background:green">QUALIFIED</div></foreignObject></svg>`],
  ['an onload script', `${SVG_OPEN} width="10" height="10" onload="document.getElementById('verdict').style.background='green'"/>`],
  ['a style attribute that would move it over the verdict', `${SVG_OPEN} width="10" height="10" style="position:fixed;top:0;left:0;width:100vw;height:100vh"><rect width="10" height="10" fill="green"/></svg>`],
];
/** Allowed elements only: a huge green "QUALIFIED" that the sanitiser lets through; it must stay inside its figure. */
const GREEN_DRAWING = `${SVG_OPEN} width="20000" height="20000" viewBox="-5000 -5000 10000 10000"><rect x="-5000" y="-5000" width="10000" height="10000" fill="rgb(0,128,0)"/><text x="0" y="0" font-size="2000" fill="white">QUALIFIED</text></svg>`;

/** signoff.html of the failing run, with figures through `cache`, written to the scratch folder. */
async function pageThrough(name: string, cache: ReturnType<typeof folderFigureCache>): Promise<{ file: string; html: string }> {
  const anchors = anchorsOf(SCENARIO_KEYS.map((key) => ({ uri: key.split(':')[0], line: Number(key.split(':')[1]) })));
  const figures = new Map<string, string>();
  for (const key of SCENARIO_KEYS) figures.set(key, (await renderFigure(lagEvidence(), anchors.get(key)!, cache))!);
  const model = buildSignoff(signoffInputOf(undefined, figures));
  assert.equal(model.qualified, false);
  const html = renderHtml(model);
  const file = path.join(scratch, `${name}.html`);
  fs.writeFileSync(file, html);
  return { file, html };
}

type Browser = Awaited<ReturnType<(typeof import('playwright-core'))['chromium']['launch']>>;
/** One headless Chromium for the file's pages (each opened in a fresh context of its own), closed when the file ends. */
let browser: Promise<Browser> | null = null;
function sharedBrowser(): Promise<Browser> {
  browser ??= import('playwright-core').then(({ chromium }) =>
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] }),
  );
  return browser;
}
after(async () => {
  if (browser !== null) await (await browser).close();
});

/** Opens a page in headless Chromium, in a context of its own, and checks it reads NOT QUALIFIED on red, with its own style only (`tampered`: a style element was put into it, which the CSP must report and refuse). */
async function assertNotQualifiedInChromium(file: string, tampered = false): Promise<void> {
  const context = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const dialogs: string[] = [];
    const messages: string[] = [];
    page.on('dialog', (dialog) => void dialogs.push(dialog.message()));
    page.on('pageerror', (error) => messages.push(error.message));
    page.on('console', (message) => messages.push(message.text()));
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    // Open every fold, so that each figure is laid out and drawn. (Page code as text: this project compiles without the DOM's types.)
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
    assert.equal((await page.locator('#verdict .word').textContent())?.trim(), 'NOT QUALIFIED');
    const look = (await page.evaluate(`(() => {
      const verdict = document.getElementById('verdict');
      const word = verdict.querySelector('.word');
      const box = verdict.getBoundingClientRect();
      const atCentre = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return {
        background: getComputedStyle(verdict).backgroundColor,
        word: getComputedStyle(word).color,
        wordVisible: getComputedStyle(word).visibility,
        after: getComputedStyle(verdict, '::after').content,
        centreInVerdict: atCentre !== null && verdict.contains(atCentre),
        badBadges: [...document.querySelectorAll('.badge.bad')].map((b) => getComputedStyle(b).backgroundColor),
        figures: [...document.querySelectorAll('figure.timeline')].map((f) => {
          const figure = f.getBoundingClientRect();
          const svg = f.querySelector('svg');
          const drawn = svg === null ? null : svg.getBoundingClientRect();
          return { figure: [figure.left, figure.right], svg: drawn === null ? null : [drawn.left, drawn.right] };
        }),
      };
    })()`)) as { background: string; word: string; wordVisible: string; after: string; centreInVerdict: boolean; badBadges: string[]; figures: { figure: number[]; svg: number[] | null }[] };
    assert.equal(look.background, 'rgb(255, 245, 245)', 'the verdict box keeps its red-tinted background');
    assert.equal(look.word, 'rgb(201, 42, 42)', 'the verdict word is red');
    assert.equal(look.wordVisible, 'visible');
    assert.equal(look.after, 'none', 'no generated "QUALIFIED"');
    assert.ok(look.centreInVerdict, 'nothing is painted over the verdict');
    assert.ok(look.badBadges.length > 0 && look.badBadges.every((color) => color === 'rgb(255, 245, 245)'), `FAIL badges stay red: ${look.badBadges.join(', ')}`);
    for (const { figure, svg } of look.figures) if (svg !== null) assert.ok(svg[0] >= figure[0] - 1 && svg[1] <= figure[1] + 1, `a figure stays in its box: ${JSON.stringify({ figure, svg })}`);
    assert.equal(await page.locator('style').count(), tampered ? 2 : 1, 'the page\'s own style element (and the one put into it)');
    assert.equal(await page.locator('foreignObject, svg script, svg style').count(), 0);
    assert.deepEqual(dialogs, [], 'no script of a figure ran');
    if (!tampered) assert.deepEqual(messages, [], 'no error and no CSP report');
    else assert.ok(messages.some((m) => /Content Security Policy/.test(m)), `the CSP refused the style put into the page: ${messages.join(' | ')}`);
  } finally {
    await context.close();
  }
}

test('forged cache entries, with or without the secret, cannot turn a NOT QUALIFIED page green', browserTest, async () => {
  const folder = path.join(scratch, 'cache');
  const evidence = lagEvidence();
  const key = figureCacheKey(figureSpec(evidence)!);
  const honest = await renderFigure(evidence, 'fig');
  // Without the secret: the old scheme's name and seal.
  const cache = folderFigureCache(folder);
  cache.set('warm-up', '<svg/>');
  fs.writeFileSync(path.join(folder, `${key}.svg`), plainlySealed(POISONS[0][1]));
  assert.equal(await renderFigure(evidence, 'fig', folderFigureCache(folder)), honest, 'an entry without the secret\'s seal is a miss');
  // With the secret: every poison the sanitiser refuses is drawn again.
  for (const [what, poison] of POISONS) {
    forgeWithSecret(folder, key, poison);
    assert.equal(await renderFigure(evidence, 'fig', folderFigureCache(folder)), honest, `${what}: drawn again`);
  }
  for (const [what, poison] of POISONS) {
    forgeWithSecret(folder, key, poison);
    const { html } = await pageThrough(`poisoned-${what.replace(/\W+/g, '-')}`, folderFigureCache(folder));
    assert.ok(!html.includes(GREEN) && !/onload|foreignObject|position:fixed/.test(html), `${what}: nothing of it reaches the page`);
  }
  // The last poison left a sealed entry the sanitiser refused, which the page replaced: open that page.
  forgeWithSecret(folder, key, POISONS[0][1]);
  await assertNotQualifiedInChromium((await pageThrough('poisoned-style', folderFigureCache(folder))).file);
  // Allowed elements only: shown, as a drawing inside its figure.
  forgeWithSecret(folder, key, GREEN_DRAWING);
  const drawn = await pageThrough('green-drawing', folderFigureCache(folder));
  assert.ok(drawn.html.includes('>QUALIFIED</text>'), 'the allowed drawing is shown');
  await assertNotQualifiedInChromium(drawn.file);
});

test('a style element and a style attribute put into the page behind the sanitiser\'s back are not applied (CSP without \'unsafe-inline\')', browserTest, async () => {
  const { html } = await pageThrough('clean', folderFigureCache(path.join(scratch, 'clean-cache')));
  assert.ok(!html.includes("'unsafe-inline'"));
  const tampered = html.replace('</main>', `<div style="position:fixed;top:0;left:0;right:0;bottom:0;background:rgb(0,128,0)"></div></main><style>${GREEN}</style>`);
  const file = path.join(scratch, 'tampered.html');
  fs.writeFileSync(file, tampered);
  await assertNotQualifiedInChromium(file, true);
});
