/**
 * The authenticator's replay memory across a restart (SEMANTICS, Authentication: a byte-identical
 * retry returns the original answer and never runs twice; a reused nonce is refused).
 *
 * Invariants:
 * - A clean stop saves the memory to `DATA_DIR/replay-memory.json` (written aside, fsynced, then
 *   renamed) with the journal's last seq at that moment. The next start takes the file (reads and
 *   removes it, durably, before serving) and restores it only if the recovered journal ends at that
 *   very seq: then nothing ran after the save, and the memory is complete.
 * - Otherwise (a crash, no file, an unreadable file, a journal that went on) the memory is lost,
 *   and the authenticator refuses requests signed up to the last recovered command's time plus
 *   the clock-skew window (`replayGuard`). Any request the crashed run executed was signed by then:
 *   it was admitted at most the window before its command's stamp, which the journal holds.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SavedNonce } from '../api/auth/authenticator.ts';
import { fsyncPath, writeFileDurably } from '../store/durable-file.ts';

const FILE = 'replay-memory.json';

export interface SavedReplayState {
  /** The journal's last seq when the memory was saved. */
  readonly lastSeq: number;
  readonly nonces: readonly SavedNonce[];
}

/** What the authenticator should do at start: restore saved nonces, or refuse until a time. */
export type ReplayGuard =
  | { readonly kind: 'restore'; readonly nonces: readonly SavedNonce[] }
  | { readonly kind: 'refuse'; readonly signedUntil: number }
  | { readonly kind: 'none' };

export function saveReplayState(dataDir: string, state: SavedReplayState): void {
  const text = JSON.stringify({ version: 1, lastSeq: state.lastSeq, nonces: state.nonces });
  writeFileDurably(join(dataDir, FILE), text);
}

/** Reads and removes the saved state (null when there is none or it cannot be read). */
export function takeReplayState(dataDir: string, onError: (error: unknown) => void): SavedReplayState | null {
  const path = join(dataDir, FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') onError(error);
    return null;
  }
  // Removed before serving: a later crash must not find it and trust it.
  rmSync(path, { force: true });
  fsyncPath(dataDir);
  try {
    const parsed = JSON.parse(text) as { version?: unknown; lastSeq?: unknown; nonces?: unknown };
    if (parsed.version !== 1 || typeof parsed.lastSeq !== 'number' || !Array.isArray(parsed.nonces)) {
      throw new Error(`${FILE} has an unknown form`);
    }
    return { lastSeq: parsed.lastSeq, nonces: parsed.nonces as SavedNonce[] };
  } catch (error) {
    onError(error);
    return null;
  }
}

/** The guard for a journal recovered up to `recovered` (seq and ts). */
export function replayGuard(
  saved: SavedReplayState | null,
  recovered: { readonly lastSeq: number; readonly lastTs: number },
  clockSkewMs: number,
): ReplayGuard {
  if (saved !== null && saved.lastSeq === recovered.lastSeq) return { kind: 'restore', nonces: saved.nonces };
  if (recovered.lastSeq === 0) return { kind: 'none' };
  return { kind: 'refuse', signedUntil: recovered.lastTs + clockSkewMs };
}
