// Unit tests of the figure cache: a figure rendered through a cache is the same bytes as one drawn
// directly (whatever the id prefix), a spec drawn once is taken from the cache afterwards, the key
// changes with the spec, an entry the sanitiser refuses is drawn again; the cucumber runs' folder
// cache is private (0700, a 0600 secret), refused when a link, another user's or writable by
// others, keeps entries as files named and sealed by HMACs under its secret so a damaged or forged
// one is a miss, and KVQUAL_FIGURE_CACHE turns it off or moves it and is named in the sign-off.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { evidenceFromRouterReplay } from '../../src/report/evidence';
import { figureCacheKey, figureSpec, renderFigure, type FigureCache } from '../../src/report/figure';
import { figureCacheFolder, figureCacheFromEnv, folderFigureCache, folderRefusal, SECRET_FILE, type FolderFigureCache } from '../../steps/support/figureCache';
import { environmentOf } from '../../src/signoff/driver';
import { createHash } from 'node:crypto';
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

/** A folder cache in the scratch folder whose warnings are collected. */
function quietCache(name: string): { cache: FolderFigureCache; warnings: string[]; folder: string } {
  const warnings: string[] = [];
  const folder = path.join(scratch, name);
  return { cache: folderFigureCache(folder, (line) => warnings.push(line)), warnings, folder };
}

/** The entry files of a cache folder (its secret left out). */
const entries = (folder: string) => fs.readdirSync(folder).filter((name) => name !== SECRET_FILE);

test('the folder cache keeps an entry as a file named by an HMAC of its key, written whole; a missing entry reads as none', () => {
  const { cache, folder, warnings } = quietCache('cache');
  // A key with characters no hex name has: a random HMAC name holds "abc" about once in 70 runs.
  assert.equal(cache.get('key:abc'), null);
  cache.set('key:abc', '<svg/>');
  assert.equal(cache.get('key:abc'), '<svg/>');
  const [file] = entries(folder);
  assert.match(file, /^[0-9a-f]{64}\.svg$/, 'no temporary file is left');
  assert.ok(!file.includes('key:abc') && file !== `${createHash('sha256').update('key:abc').digest('hex')}.svg`, 'the name is not the key nor its plain SHA-256');
  assert.equal(folderFigureCache(folder).get('key:abc'), '<svg/>', 'another process reads it');
  assert.deepEqual(warnings, []);
});

test('the folder is made private (0700), its secret 0600, made once and kept', () => {
  const { cache, folder } = quietCache(path.join('deep', 'private'));
  cache.set('k', '<svg/>');
  assert.equal(fs.statSync(folder).mode & 0o777, 0o700);
  const secret = path.join(folder, SECRET_FILE);
  assert.equal(fs.statSync(secret).mode & 0o777, 0o600);
  assert.equal(fs.statSync(secret).size, 32);
  const before = fs.readFileSync(secret);
  folderFigureCache(folder).set('j', '<svg/>');
  assert.deepEqual(fs.readFileSync(secret), before, 'a second cache keeps the secret');
  for (const name of entries(folder)) assert.equal(fs.statSync(path.join(folder, name)).mode & 0o777, 0o600);
});

test('a damaged or forged entry (emptied, cut short, altered, resealed with a plain SHA-256, moved from another key, or without a seal) is a miss, drawn again and overwritten', () => {
  const { cache, folder } = quietCache('damaged');
  const svg = '<svg><g/></svg>';
  cache.set('other', '<svg><p/></svg>');
  const otherEntry = fs.readFileSync(path.join(folder, entries(folder)[0]), 'utf8');
  cache.set('k', svg);
  const entry = path.join(folder, entries(folder).find((name) => fs.readFileSync(path.join(folder, name), 'utf8') !== otherEntry)!);
  const plainSeal = (text: string) => `${text}\n<!-- kvqual figure cache hmac-sha256:${createHash('sha256').update(`k\n${text}`).digest('hex')} -->\n`;
  const damages: [string, (text: string) => string][] = [
    ['emptied', () => ''],
    ['cut short', (text) => text.slice(0, text.length - 10)],
    ['altered', (text) => text.replace('<g/>', '<p/>')],
    ['resealed with a plain SHA-256', () => plainSeal('<svg><style/></svg>')],
    ['moved from another key', () => otherEntry],
    ['without a seal', () => svg],
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

test('another secret reads none of the entries: a folder whose secret was replaced starts afresh', () => {
  const { cache, folder } = quietCache('rekeyed');
  cache.set('k', '<svg/>');
  fs.writeFileSync(path.join(folder, SECRET_FILE), Buffer.alloc(32, 7), { mode: 0o600 });
  assert.equal(folderFigureCache(folder).get('k'), null);
});

test('a folder others may write, a link, or a secret others may read refuses the cache: one warning, nothing read or written', () => {
  const open = path.join(scratch, 'open');
  fs.mkdirSync(open);
  fs.chmodSync(open, 0o777);
  const linked = path.join(scratch, 'linked');
  fs.symlinkSync(path.join(scratch, 'cache'), linked);
  const leaky = path.join(scratch, 'leaky');
  fs.mkdirSync(leaky, { mode: 0o700 });
  fs.writeFileSync(path.join(leaky, SECRET_FILE), Buffer.alloc(32, 1), { mode: 0o644 });
  fs.chmodSync(path.join(leaky, SECRET_FILE), 0o644);
  const aFile = path.join(scratch, 'a-file');
  fs.writeFileSync(aFile, 'x');
  for (const [folder, why] of [
    [open, /can be written by other users \(mode 0777\)/],
    [linked, /is a symbolic link/],
    [leaky, /its secret can be read or written by other users \(mode 0644\)/],
    [aFile, /it is not a folder/],
    [path.join(aFile, 'cache'), /it cannot be made or read/],
  ] as const) {
    const warnings: string[] = [];
    const cache = folderFigureCache(folder, (line) => warnings.push(line));
    assert.doesNotThrow(() => cache.set('abc', '<svg/>'));
    assert.equal(cache.get('abc'), null);
    assert.match(cache.refusal() ?? '', why, folder);
    assert.equal(warnings.length, 1, 'warned once');
    assert.ok(warnings[0].startsWith(`kvqual: figure cache ${folder} not used: `), warnings[0]);
  }
  assert.deepEqual(fs.readdirSync(open), [], 'nothing written to the open folder');
  assert.deepEqual(folderRefusal(path.join(scratch, 'cache')), null);
});

test('a folder that belongs to another user is refused (run as root: the folder handed to nobody)', { skip: process.getuid?.() === 0 ? false : 'needs root to hand a folder to another user' }, () => {
  const theirs = path.join(scratch, 'theirs');
  fs.mkdirSync(theirs, { mode: 0o700 });
  fs.chownSync(theirs, 65534, 65534);
  assert.match(folderRefusal(theirs) ?? '', /belongs to user 65534, not to you \(user 0\)/);
});

test('KVQUAL_FIGURE_CACHE=off turns the cache off; a folder moves it; the sign-off names it when set', () => {
  assert.equal(figureCacheFromEnv({ KVQUAL_FIGURE_CACHE: 'off' }), undefined);
  const folder = path.join(scratch, 'moved');
  figureCacheFromEnv({ KVQUAL_FIGURE_CACHE: folder })!.set('k', '<svg/>');
  assert.equal(entries(folder).length, 1);
  assert.equal(figureCacheFolder({}), path.join(os.homedir(), '.cache', 'kvqual', 'figures'), 'on by default, in the user\'s cache folder');
  assert.equal(figureCacheFolder({ XDG_CACHE_HOME: '/var/cache/me' }), '/var/cache/me/kvqual/figures');
  assert.equal(figureCacheFolder({ XDG_CACHE_HOME: 'relative' }), path.join(os.homedir(), '.cache', 'kvqual', 'figures'), 'a relative XDG_CACHE_HOME is ignored, as the spec says');
  assert.ok(!fs.existsSync(path.join(scratch, 'never-used')) && figureCacheFromEnv({ KVQUAL_FIGURE_CACHE: path.join(scratch, 'never-used') }) !== undefined, 'made on first use only');
  assert.ok(!fs.existsSync(path.join(scratch, 'never-used')));
  assert.deepEqual(environmentOf({}, false), []);
  const named = environmentOf({ KVQUAL_FIGURE_CACHE: folder }, false);
  assert.deepEqual(named.map((v) => [v.name, v.value]), [['KVQUAL_FIGURE_CACHE', folder]]);
  assert.match(named[0].meaning, /figure cache/);
  assert.deepEqual(environmentOf({ KVQUAL_FIGURE_CACHE: 'off' }, true).map((v) => [v.name, v.value]), [['KVQUAL_FIGURE_CACHE', 'off']], 'a merge names it too: it changes what the merge renders');
});
