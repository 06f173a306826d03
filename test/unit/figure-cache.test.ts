// Unit tests of the figure cache: a figure rendered through a cache is the same bytes as one drawn
// directly (whatever the id prefix), a spec drawn once is taken from the cache afterwards, the key
// changes with the spec; the cucumber runs' folder cache keeps entries as files, written whole,
// sealed with their SHA-256 so a damaged one is a miss, and KVQUAL_FIGURE_CACHE turns it off or
// moves it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { evidenceFromRouterReplay } from '../../src/report/evidence';
import { figureCacheKey, figureSpec, renderFigure, type FigureCache } from '../../src/report/figure';
import { figureCacheFromEnv, folderFigureCache } from '../../steps/support/figureCache';
import { lagReplay } from '../support/replays';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-figure-cache-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

function memoryCache(): FigureCache & { gets: string[]; sets: string[] } {
  const entries = new Map<string, string>();
  const gets: string[] = [];
  const sets: string[] = [];
  return {
    gets,
    sets,
    get: (key) => (gets.push(key), entries.get(key) ?? null),
    set: (key, svg) => void (sets.push(key), entries.set(key, svg)),
  };
}

test('through a cache, a figure is the same bytes as drawn directly, and a spec is drawn only once', async () => {
  const evidence = evidenceFromRouterReplay(lagReplay(), 1893);
  const cache = memoryCache();
  const direct = await renderFigure(evidence, 'one');
  const first = await renderFigure(evidence, 'one', cache);
  const second = await renderFigure(evidence, 'one', cache);
  assert.ok(direct !== null && direct.startsWith('<svg'));
  assert.equal(first, direct);
  assert.equal(second, direct);
  assert.equal(cache.sets.length, 1, 'drawn once');
  assert.equal(cache.gets.length, 2);
  assert.equal(await renderFigure(evidence, 'two', cache), await renderFigure(evidence, 'two'), 'another id prefix from the same entry');
  assert.equal(cache.sets.length, 1);
});

test('the key names the spec: other evidence, another key; the entry under a key is what is shown', async () => {
  const plain = figureSpec(evidenceFromRouterReplay(lagReplay(), 1893))!;
  const other = figureSpec(evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893))!;
  assert.match(figureCacheKey(plain), /^[0-9a-f]{64}$/);
  assert.equal(figureCacheKey(plain), figureCacheKey(figureSpec(evidenceFromRouterReplay(lagReplay(), 1893))!));
  assert.notEqual(figureCacheKey(plain), figureCacheKey(other));
  const seeded = memoryCache();
  seeded.set(figureCacheKey(plain), '<svg xmlns="http://www.w3.org/2000/svg"><clipPath id="clip9"/><g clip-path="url(#clip9)"/></svg>');
  assert.equal(await renderFigure(evidenceFromRouterReplay(lagReplay(), 1893), 'fig', seeded), '<svg xmlns="http://www.w3.org/2000/svg"><clipPath id="fig-1"/><g clip-path="url(#fig-1)"/></svg>');
});

test('an entry the sanitiser refuses (a <style>, a script, not SVG) is drawn again and replaced, never shown', async () => {
  const evidence = evidenceFromRouterReplay(lagReplay(), 1893);
  const key = figureCacheKey(figureSpec(evidence)!);
  const direct = await renderFigure(evidence, 'fig');
  for (const poison of [
    '<svg xmlns="http://www.w3.org/2000/svg"><style>#verdict { background: green }</style></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    '<html><body>QUALIFIED</body></html>',
  ]) {
    const cache = memoryCache();
    cache.set(key, poison);
    assert.equal(await renderFigure(evidence, 'fig', cache), direct, poison);
    assert.equal(cache.sets.length, 2, `${poison}: drawn again and stored`);
  }
});

test('the folder cache keeps an entry as a file, written whole; a missing entry reads as none', () => {
  const folder = path.join(scratch, 'cache');
  const cache = folderFigureCache(folder);
  assert.equal(cache.get('abc'), null);
  cache.set('abc', '<svg/>');
  assert.equal(cache.get('abc'), '<svg/>');
  assert.deepEqual(fs.readdirSync(folder), ['abc.svg'], 'no temporary file is left');
  assert.equal(folderFigureCache(folder).get('abc'), '<svg/>', 'another process reads it');
});

test('a damaged entry (emptied, cut short, altered, or without its seal) is a miss, drawn again and overwritten', () => {
  const folder = path.join(scratch, 'damaged');
  const cache = folderFigureCache(folder);
  const svg = '<svg><g/></svg>';
  const entry = path.join(folder, 'k.svg');
  const damages: [string, (text: string) => string][] = [
    ['emptied', () => ''],
    ['cut short', (text) => text.slice(0, text.length - 10)],
    ['altered', (text) => text.replace('<g/>', '<p/>')],
    ['an old entry without a seal', () => svg],
  ];
  for (const [what, damage] of damages) {
    cache.set('k', svg);
    assert.equal(cache.get('k'), svg, `${what}: whole before`);
    fs.writeFileSync(entry, damage(fs.readFileSync(entry, 'utf8')));
    assert.equal(cache.get('k'), null, what);
    cache.set('k', svg);
    assert.equal(cache.get('k'), svg, `${what}: drawn again, the entry is whole`);
  }
});

test('an unwritable cache folder is only a cache miss', () => {
  const blocked = path.join(scratch, 'a-file');
  fs.writeFileSync(blocked, 'x');
  const cache = folderFigureCache(path.join(blocked, 'cache'));
  assert.doesNotThrow(() => cache.set('abc', '<svg/>'));
  assert.equal(cache.get('abc'), null);
});

test('KVQUAL_FIGURE_CACHE=off turns the cache off; a folder moves it', () => {
  assert.equal(figureCacheFromEnv({ KVQUAL_FIGURE_CACHE: 'off' }), undefined);
  const folder = path.join(scratch, 'moved');
  figureCacheFromEnv({ KVQUAL_FIGURE_CACHE: folder })!.set('k', '<svg/>');
  assert.deepEqual(fs.readdirSync(folder), ['k.svg']);
  assert.ok(figureCacheFromEnv({}) !== undefined, 'on by default');
});
