// Whether another process is still running: the outputs of a killed replay and the run folders
// of a killed qualify are removed by the next run, never those of a process still writing them.
// A writer is named by its pid and its pid namespace (its "owner" text, `<pid>-<namespace>`): two
// containers sharing a volume have pids that mean nothing to each other, and each took the other's
// live files for a dead process's and deleted them (found by an outside audit). A file of another
// namespace is left alone; one without a namespace (older kvqual) is judged by its pid alone.
import { createHash } from 'node:crypto';
import fs from 'node:fs';

/** Whether the process `pid` is running (one that exists but is not ours to signal counts as running). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

let namespaceTag: string | null = null;

/**
 * This machine boot's pid namespace, as 8 hex digits (Linux: the namespace's inode and the boot
 * id); "0" where neither can be read, which every process there shares.
 */
export function pidNamespace(): string {
  if (namespaceTag !== null) return namespaceTag;
  const read = (what: () => string): string => {
    try {
      return what();
    } catch {
      return '';
    }
  };
  const identity = `${read(() => fs.readlinkSync('/proc/self/ns/pid'))} ${read(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim())}`;
  namespaceTag = identity.trim() === '' ? '0' : createHash('sha256').update(identity).digest('hex').slice(0, 8);
  return namespaceTag;
}

/** This process as the owner of the files it writes: `<pid>-<namespace>`. */
export function ownerTag(): string {
  return `${process.pid}-${pidNamespace()}`;
}

/** The pattern of an owner text in a file name: a pid, and its namespace (absent in older names). */
export const OWNER_PATTERN = '[1-9]\\d*(?:-[0-9a-f]{1,8})?';

/**
 * Whether the writer an owner text names is known to be gone: a process of this namespace that is
 * not running. Ours, one still running, or one of another namespace (which cannot be told): no.
 */
export function ownerGone(owner: string): boolean {
  const match = /^([1-9]\d*)(?:-([0-9a-f]{1,8}))?$/.exec(owner);
  if (match === null) return false;
  const pid = Number(match[1]);
  if (match[2] !== undefined && match[2] !== pidNamespace()) return false;
  return pid !== process.pid && !processAlive(pid);
}
