// The figure cache of the cucumber runs: each scenario's figure (src/report/figure.ts) drawn by
// vega once per machine and kept as a file, so running the suite again (npm test, both runs of npm
// run qualify, the integration tests' qualify runs) draws only what changed; the sign-off's own
// figures (scripts/qualify.ts hands this cache to the driver) come from what run 1 drew. The SVG is
// the same bytes either way. KVQUAL_FIGURE_CACHE=off turns it off, KVQUAL_FIGURE_CACHE=<folder>
// moves it (default: kvqual/figures in the user's cache folder, $XDG_CACHE_HOME or ~/.cache); the
// sign-off names the variable when it is set. Read here, never in src/.
//
// Nobody else may write it. The folder is made private (mode 0700) and refused, with one warning
// and every figure drawn afresh, when it is a link, belongs to another user or others may write
// it (a folder someone else made first). It holds a secret of 32 random bytes
// (mode 0600), made once: an entry's file name is the HMAC-SHA-256 of the figure's key (the spec
// and the renderer's versions) under that secret, and its last line seals it with the HMAC of key
// and SVG, so an entry nobody holding the secret wrote, or a damaged one, is a miss: drawn again
// and overwritten, never published. Files are written whole (a temporary file renamed), so runs at
// the same time can share the folder; an unreadable or unwritable entry is drawn again.
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FigureCache } from '../../src/report/figure';

export const FIGURE_CACHE_ENV = 'KVQUAL_FIGURE_CACHE';

/** The secret's file in the cache folder, and its length in bytes. */
export const SECRET_FILE = 'secret';
const SECRET_BYTES = 32;

/** The last line of an entry: the HMAC of its key and the SVG before it. */
const SEAL = /\n<!-- kvqual figure cache hmac-sha256:([0-9a-f]{64}) -->\n$/;

/** A folder cache, with why it is not used (null while it is). */
export interface FolderFigureCache extends FigureCache {
  readonly folder: string;
  /** Why the folder is refused (checked on first use), or null. */
  refusal(): string | null;
}

function hmac(secret: Buffer, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

function sealed(secret: Buffer, key: string, svg: string): string {
  return `${svg}\n<!-- kvqual figure cache hmac-sha256:${hmac(secret, `${key}\n${svg}`)} -->\n`;
}

/** The SVG of an entry sealed under this secret for this key; null for one damaged, forged, moved from another key, or without a seal. */
export function unsealed(secret: Buffer, key: string, entry: string): string | null {
  const seal = SEAL.exec(entry);
  if (seal === null) return null;
  const svg = entry.slice(0, seal.index);
  return hmac(secret, `${key}\n${svg}`) === seal[1] ? svg : null;
}

const me = () => (typeof process.getuid === 'function' ? process.getuid() : null);
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/** Why a file or folder (lstat) is not the user's own and private enough: others must not write it, nor (`unreadable`) read it. */
function notPrivate(stat: fs.Stats, what: string, unreadable: boolean): string | null {
  if (stat.isSymbolicLink()) return `${what} is a symbolic link`;
  const uid = me();
  if (uid !== null && stat.uid !== uid) return `${what} belongs to user ${stat.uid}, not to you (user ${uid})`;
  const forbidden = unreadable ? 0o077 : 0o022;
  if ((stat.mode & forbidden) !== 0) return `${what} can be ${unreadable ? 'read or written' : 'written'} by other users (mode ${octal(stat.mode)})`;
  return null;
}

/** Makes the folder (mode 0700) if it is missing; why it cannot hold the cache, or null. */
export function folderRefusal(folder: string): string | null {
  try {
    if (!fs.existsSync(folder)) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(folder);
    if (!stat.isSymbolicLink() && !stat.isDirectory()) return 'it is not a folder';
    return notPrivate(stat, 'the folder', false);
  } catch (error) {
    return `it cannot be made or read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/** The folder's secret, made once (mode 0600, linked into place whole); a string says why it cannot be used. */
export function secretOf(folder: string): Buffer | string {
  const file = path.join(folder, SECRET_FILE);
  try {
    if (!fs.existsSync(file)) {
      const temporary = `${file}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(temporary, randomBytes(SECRET_BYTES), { mode: 0o600, flag: 'wx' });
        fs.linkSync(temporary, file);
      } catch (error) {
        // Another run made it first: theirs is used.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      } finally {
        fs.rmSync(temporary, { force: true });
      }
    }
    const stat = fs.lstatSync(file);
    const refusal = notPrivate(stat, 'its secret', true) ?? (stat.isFile() && stat.size === SECRET_BYTES ? null : `its secret is not a file of ${SECRET_BYTES} bytes`);
    return refusal ?? fs.readFileSync(file);
  } catch (error) {
    return `its secret cannot be made or read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/**
 * A FigureCache kept as one file per key in `folder`, checked on first use: a refused folder is
 * never read or written (every figure is drawn), with one warning through `warn`.
 */
export function folderFigureCache(folder: string, warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): FolderFigureCache {
  let state: { secret: Buffer } | { refused: string } | null = null;
  const secret = (): Buffer | null => {
    if (state === null) {
      const refused = folderRefusal(folder);
      const made = refused === null ? secretOf(folder) : refused;
      state = typeof made === 'string' ? { refused: made } : { secret: made };
      if ('refused' in state) warn(`kvqual: figure cache ${folder} not used: ${state.refused}; every figure is drawn afresh`);
    }
    return 'secret' in state ? state.secret : null;
  };
  const file = (key: string, secretKey: Buffer) => path.join(folder, `${hmac(secretKey, key)}.svg`);
  return {
    folder,
    refusal() {
      secret();
      return state !== null && 'refused' in state ? state.refused : null;
    },
    get(key) {
      const held = secret();
      if (held === null) return null;
      try {
        return unsealed(held, key, fs.readFileSync(file(key, held), 'utf8'));
      } catch {
        return null;
      }
    },
    set(key, svg) {
      const held = secret();
      if (held === null) return;
      const temporary = `${file(key, held)}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(temporary, sealed(held, key, svg), { mode: 0o600 });
        fs.renameSync(temporary, file(key, held));
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

/**
 * The folder the environment names; by default kvqual/figures in the user's cache folder
 * ($XDG_CACHE_HOME, else ~/.cache), which others cannot make first as they could a name in /tmp;
 * null when the cache is turned off.
 */
export function figureCacheFolder(env: NodeJS.ProcessEnv = process.env): string | null {
  const setting = env[FIGURE_CACHE_ENV];
  if (setting === 'off') return null;
  if (setting) return path.resolve(setting);
  const cacheHome = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'kvqual', 'figures');
}

/** The cache the environment names (the sign-off draws into it): undefined when it is turned off. */
export function figureCacheFromEnv(env: NodeJS.ProcessEnv = process.env): FolderFigureCache | undefined {
  const folder = figureCacheFolder(env);
  return folder === null ? undefined : folderFigureCache(folder);
}
