/**
 * Temporary directories for tests, removed when the test process exits. `node --test` runs each
 * test file in its own process, so a file's directories go when it ends, whether or not its tests
 * closed what used them (a data directory holds API secrets and the encryption key).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory under the OS's temp directory, named `<prefix>XXXXXX`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
