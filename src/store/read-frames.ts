/**
 * Verifying and decoding stored frames for readers of any backend.
 *
 * Invariants:
 * - A frame is decoded only after its checksum verified; a failing frame met while reading is
 *   corruption (the torn tail was already dropped when the journal was opened).
 * - Frames must be contiguous: each starts where the previous one ended.
 */
import { JournalCorruptError, type JournalEntry } from './journal.ts';
import { decodeFrame, frameChecksumValid, type StoredFrame } from './record-format.ts';

/**
 * Verifies and decodes `frames` (ascending), returning entries with seq ≥ fromSeq.
 * `expectedFirstSeq` is where the first frame must start (null when unknown: the first read).
 */
export function readVerifiedFrames<C>(
  frames: readonly StoredFrame[],
  fromSeq: number,
  expectedFirstSeq: number | null,
): JournalEntry<C>[] {
  let expected = expectedFirstSeq;
  const out: JournalEntry<C>[] = [];
  for (const frame of frames) {
    if (expected !== null && frame.firstSeq !== expected) {
      throw new JournalCorruptError(
        `journal gap: expected a record starting at seq ${expected}, found ${frame.firstSeq}`,
        expected,
      );
    }
    if (!frameChecksumValid(frame)) {
      throw new JournalCorruptError(
        `journal record at seq ${frame.firstSeq} fails its checksum`,
        frame.firstSeq,
      );
    }
    let entries: JournalEntry<C>[];
    try {
      entries = decodeFrame<C>(frame);
    } catch (error) {
      throw new JournalCorruptError(
        `journal record at seq ${frame.firstSeq} cannot be decoded: ${(error as Error).message}`,
        frame.firstSeq,
      );
    }
    expected = frame.firstSeq + frame.count;
    if (frames.length === 1 && frame.firstSeq >= fromSeq) return entries;
    if (frame.firstSeq >= fromSeq) {
      for (const e of entries) out.push(e);
    } else {
      for (const e of entries) if (e.seq >= fromSeq) out.push(e);
    }
  }
  return out;
}
