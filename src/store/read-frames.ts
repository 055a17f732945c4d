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

/** A stored frame as both backends' queries return it (snake_case columns). */
export interface FrameRow {
  first_seq: number;
  count: number;
  version: number;
  payload: Buffer;
  checksum: number;
}

export function toFrame(row: FrameRow): StoredFrame {
  return {
    firstSeq: row.first_seq,
    count: row.count,
    version: row.version,
    payload: row.payload,
    checksum: row.checksum,
  };
}

/**
 * Pages through stored frames from `startFirstSeq` (the frame holding `fromSeq`), verifying each
 * and yielding its entries with seq ≥ fromSeq. `fetchPage(cursor)` returns the next frames with
 * first_seq ≥ cursor, ascending; an empty page ends the read.
 */
export async function* readFramePages<C>(
  fetchPage: (cursor: number) => FrameRow[] | Promise<FrameRow[]>,
  startFirstSeq: number,
  fromSeq: number,
): AsyncIterable<readonly JournalEntry<C>[]> {
  let cursor = startFirstSeq;
  let expected: number | null = null;
  const wanted = Math.max(fromSeq, 1);
  for (;;) {
    const rows = await fetchPage(cursor);
    if (rows.length === 0) return;
    for (const row of rows) {
      const entries = readVerifiedFrames<C>([toFrame(row)], wanted, expected);
      expected = row.first_seq + row.count;
      if (entries.length > 0) yield entries;
    }
    cursor = rows[rows.length - 1]!.first_seq + 1;
  }
}
