/**
 * Small files that must survive a power loss once written (the secrets key, the admin token, demo
 * credentials, the replay memory): written aside, fsynced, moved into place, and the directory
 * fsynced, so a reader finds either nothing or the whole file.
 */
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface DurableWriteOptions {
  /** File mode (default 0600: these files hold secrets). */
  readonly mode?: number;
  /** Fail with EEXIST instead of replacing an existing file (two writers race; one wins). */
  readonly exclusive?: boolean;
}

export function writeFileDurably(path: string, data: string, options: DurableWriteOptions = {}): void {
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, data, { mode: options.mode ?? 0o600 });
  try {
    fsyncPath(aside);
    if (options.exclusive === true) linkSync(aside, path);
    else renameSync(aside, path);
  } finally {
    rmSync(aside, { force: true });
  }
  fsyncPath(dirname(path));
}

/** fsync of a file or directory by path. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
