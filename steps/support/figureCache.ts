// The figure cache of the cucumber runs: each scenario's figure (src/report/figure.ts) drawn by
// vega once per machine and kept as a file named by its key (the spec and the renderer's
// versions), so running the suite again (npm test, both runs of npm run qualify, the integration
// tests' qualify runs) draws only what changed; the sign-off's own figures (scripts/qualify.ts
// hands this cache to the driver) come from what run 1 drew. The SVG is the same bytes either way. Files are
// written whole (a temporary file renamed), so runs at the same time can share the folder; an
// unreadable or unwritable entry is simply drawn again. KVQUAL_FIGURE_CACHE=off turns it off,
// KVQUAL_FIGURE_CACHE=<folder> moves it (default: kvqual-figure-cache-<uid> in the system's
// temporary folder). Each entry is sealed with its SVG's SHA-256; a damaged one is a miss. Read
// here, never in src/.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FigureCache } from '../../src/report/figure';

export const FIGURE_CACHE_ENV = 'KVQUAL_FIGURE_CACHE';

/** The last line of an entry: the SHA-256 of the SVG before it, so a damaged entry is a miss. */
const SEAL = /\n<!-- kvqual figure cache sha256:([0-9a-f]{64}) -->\n$/;

function sealed(svg: string): string {
  return `${svg}\n<!-- kvqual figure cache sha256:${sha256(svg)} -->\n`;
}

/** The SVG of an entry whose seal matches it; null for a damaged one (empty, cut short, altered) or one without a seal. */
export function unsealed(entry: string): string | null {
  const seal = SEAL.exec(entry);
  if (seal === null) return null;
  const svg = entry.slice(0, seal.index);
  return sha256(svg) === seal[1] ? svg : null;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A FigureCache kept as one file per key in `folder`. Each entry carries the SHA-256 of its SVG: a
 * damaged one (a crash or a cleaner that emptied or cut files) is drawn again and overwritten,
 * never published (an audit's emptied entries gave a QUALIFIED sign-off with blank figures).
 */
export function folderFigureCache(folder: string): FigureCache {
  const file = (key: string) => path.join(folder, `${key}.svg`);
  return {
    get(key) {
      try {
        return unsealed(fs.readFileSync(file(key), 'utf8'));
      } catch {
        return null;
      }
    },
    set(key, svg) {
      const temporary = `${file(key)}.${process.pid}.tmp`;
      try {
        fs.mkdirSync(folder, { recursive: true });
        fs.writeFileSync(temporary, sealed(svg));
        fs.renameSync(temporary, file(key));
      } catch {
        try {
          fs.rmSync(temporary, { force: true });
        } catch {
          // Nothing was written.
        }
      }
    },
  };
}

/** The cache the hooks use, as the environment asks: undefined when it is turned off. */
export function figureCacheFromEnv(env: NodeJS.ProcessEnv = process.env): FigureCache | undefined {
  const setting = env[FIGURE_CACHE_ENV];
  if (setting === 'off') return undefined;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return folderFigureCache(setting ? path.resolve(setting) : path.join(os.tmpdir(), `kvqual-figure-cache-${uid}`));
}
