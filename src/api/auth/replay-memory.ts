/**
 * The authenticator's memory of signed nonces inside the clock-skew window, bounded and cheap.
 *
 * Invariants:
 * - A nonce stays remembered (per API key) from first use until its timestamp has left the window:
 *   it is forgotten at the earliest at `expiresAt` and at the latest `bucketMs` later (never
 *   earlier, so a replay inside the window is always caught).
 * - Expiry is a ring of time buckets (`bucketMs` wide) in expiry order: pruning costs O(expired +
 *   elapsed buckets), never a scan of the live nonces, whatever order timestamps arrive in.
 * - 'answer' retention keeps the full signature and, once settled, only the status and the
 *   serialized body (the very string or bytes sent); a retry in flight waits on a promise made only
 *   when such a retry arrives. 'fingerprint' retention keeps a 30-bit number from the signature
 *   (a small integer, no allocation): a byte-identical retry is told to run again, anything else
 *   is a conflict. A WebSocket session nonce conflicts with everything.
 * - `full` turns true at `maxEntries` nonces or `maxAnswerBytes` of kept bodies (bytes, or a text
 *   body's length); the caller refuses new requests then, nothing already remembered is dropped early.
 * - Each key's nonces and kept bytes are counted too: `fullFor(key)` is also true when the memory is
 *   at least half full (entries or bytes) and that key holds its share or more
 *   (`maxEntriesPerKey` / `maxAnswerBytesPerKey`). So one key takes at most about half of the
 *   memory, and the other half stays for the keys within their share, refused only at the global
 *   cap; below half full no key is held to its share (a lone busy key is not refused for it).
 * - Nonces are compared without regard to case (they are UUIDs, accepted in either case): the
 *   same nonce upper-cased is the same nonce.
 * - `save` lists every remembered nonce with the end of its bucket, and `restore` takes such a list
 *   back (after a clean restart), so a nonce is still remembered as long as it would have been. A
 *   request saved before its answer was settled is restored as 'unknown': its retry is told the
 *   outcome is unknown, never run again. A restart whose clock starts behind the stopped run's
 *   restores nonces expiring past the ring's span too: they wait aside until the ring reaches them.
 */
import type { StoredAnswer } from './authenticator.ts';

export type AnswerRetention = 'answer' | 'fingerprint';

export interface ReplayMemoryLimits {
  readonly maxEntries: number;
  readonly maxAnswerBytes: number;
  /** One key's share of `maxEntries`; absent or null: `defaultKeyShare(maxEntries)`. */
  readonly maxEntriesPerKey?: number | null;
  /** One key's share of `maxAnswerBytes`; absent or null: `defaultKeyShare(maxAnswerBytes)`. */
  readonly maxAnswerBytesPerKey?: number | null;
}

export const DEFAULT_REPLAY_LIMITS: ReplayMemoryLimits = {
  maxEntries: 1_000_000,
  maxAnswerBytes: 268_435_456,
};

/**
 * A key's default share: a sixteenth of the global cap. With the default caps that is 62,500
 * nonces and 16 MiB, well above what a key at the default rate limits holds inside the window (at
 * most 250 requests/s for 30 s: 7,500 nonces, and its order answers, some 700 bytes each: ~5 MB).
 */
export function defaultKeyShare(globalCap: number): number {
  return Math.ceil(globalCap / 16);
}

export type ReplayLookup =
  | { readonly kind: 'absent' }
  | { readonly kind: 'replay'; readonly answer: Promise<StoredAnswer> }
  | { readonly kind: 'rerun' }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'unknown' };

/**
 * A remembered nonce as saved across a clean restart: `value` is a fingerprint (a number, -1 for a
 * WebSocket session), or the kept answer (`body` null when it was never settled; `bytes` when the
 * body was sent as bytes, then base64).
 */
export interface SavedNonce {
  readonly apiKey: string;
  readonly nonce: string;
  readonly expiresAt: number;
  readonly value:
    | number
    | {
        readonly signature: string;
        readonly status: number;
        readonly body: string | null;
        readonly bytes: boolean;
      };
}

const ABSENT: ReplayLookup = { kind: 'absent' };
const RERUN: ReplayLookup = { kind: 'rerun' };
const CONFLICT: ReplayLookup = { kind: 'conflict' };
const UNKNOWN: ReplayLookup = { kind: 'unknown' };
/** A session nonce: matches no fingerprint (those are >= 0). */
const SESSION = -1;

/** One key's remembered nonces (lower-cased), with the size of the answers it keeps. */
class NonceTable extends Map<string, Remembered> {
  bytes = 0;
  /** When a refused request of this key can get in, as last found by `freedAt`; NaN: not looked up. */
  freedAt = Number.NaN;

  constructor(readonly apiKey: string) {
    super();
  }
}

/** A request whose answer is kept for byte-identical retries. */
class KeptAnswer {
  status = 0;
  body: string | Buffer | null = null;
  waiters: Array<(answer: StoredAnswer) => void> | null = null;
  forgotten = false;
  /** Restored without an answer: the previous run stopped before settling it. */
  unknown = false;

  constructor(readonly signature: string) {}

  answer(): Promise<StoredAnswer> {
    if (this.body !== null) return Promise.resolve({ status: this.status, body: this.body });
    return new Promise((resolve) => {
      if (this.waiters === null) this.waiters = [];
      this.waiters.push(resolve);
    });
  }
}

type Remembered = number | KeptAnswer;

export class ReplayMemory {
  private readonly tables = new Map<string, NonceTable>();
  /** Slot i holds (table, nonce) pairs, flattened, for bucket numbers ≡ i modulo the ring size. */
  private readonly ring: Array<Array<NonceTable | string>>;
  private cursor = Number.NaN;
  /**
   * Restored nonces whose bucket lies past the ring's span (a restart whose clock starts behind
   * the stopped run's): each moves into the ring once the cursor comes within reach of it.
   */
  private later: Array<{ readonly bucket: number; readonly table: NonceTable; readonly key: string }> = [];
  private count = 0;
  private bytes = 0;
  readonly maxEntriesPerKey: number;
  readonly maxAnswerBytesPerKey: number;

  constructor(
    clockSkewMs: number,
    private readonly limits: ReplayMemoryLimits = DEFAULT_REPLAY_LIMITS,
    readonly bucketMs = 100,
  ) {
    // expiresAt lies in (now, now + 2 * skew + 1], so this many slots never wrap onto a live bucket.
    const slots = Math.ceil((2 * clockSkewMs + 1) / bucketMs) + 2;
    this.ring = Array.from({ length: slots }, () => []);
    this.maxEntriesPerKey = limits.maxEntriesPerKey ?? defaultKeyShare(limits.maxEntries);
    this.maxAnswerBytesPerKey = limits.maxAnswerBytesPerKey ?? defaultKeyShare(limits.maxAnswerBytes);
  }

  get entries(): number {
    return this.count;
  }

  get answerBytes(): number {
    return this.bytes;
  }

  get full(): boolean {
    return this.count >= this.limits.maxEntries || this.bytes >= this.limits.maxAnswerBytes;
  }

  /** Full for this key: the whole memory is, or it is half full and the key is over its share. */
  fullFor(apiKey: string): boolean {
    const table = this.tables.get(apiKey);
    return this.fullWith(this.count, this.bytes, table?.size ?? 0, table?.bytes ?? 0);
  }

  /** `fullFor`'s rule on given counts: the memory's, and one key's. */
  private fullWith(count: number, bytes: number, keyCount: number, keyBytes: number): boolean {
    const { maxEntries, maxAnswerBytes } = this.limits;
    if (count >= maxEntries || bytes >= maxAnswerBytes) return true;
    const pressed = 2 * count >= maxEntries || 2 * bytes >= maxAnswerBytes;
    return pressed && (keyCount >= this.maxEntriesPerKey || keyBytes >= this.maxAnswerBytesPerKey);
  }

  /**
   * When a refused request of this key may be admitted again, for a 429's `retryAfterMs`: the
   * first moment `fullFor(apiKey)` turns false as nonces leave, if no new one comes. Nonces leave
   * in bucket order, so that is the end of a bucket found by walking the ring from the oldest: the
   * one after which the memory is below its caps and either below half full or the key within its
   * share. NaN when nothing in the memory would free it. The answer is remembered on the key until
   * that moment, so a refused flood costs one walk per answer, not one per request.
   */
  freedAt(apiKey: string, now: number): number {
    const table = this.tables.get(apiKey);
    if (table !== undefined && table.freedAt > now) return table.freedAt;
    const freedAt = this.walkToFree(table);
    if (table !== undefined) table.freedAt = freedAt;
    return freedAt;
  }

  private walkToFree(table: NonceTable | undefined): number {
    let count = this.count;
    let bytes = this.bytes;
    let keyCount = table?.size ?? 0;
    let keyBytes = table?.bytes ?? 0;
    const admitted = () => !this.fullWith(count, bytes, keyCount, keyBytes);
    const leave = (owner: NonceTable, nonce: string) => {
      const value = owner.get(nonce);
      if (value === undefined) return;
      const size = typeof value !== 'number' && value.body !== null ? value.body.length : 0;
      count -= 1;
      bytes -= size;
      if (owner === table) {
        keyCount -= 1;
        keyBytes -= size;
      }
    };
    if (!Number.isNaN(this.cursor)) {
      for (let step = 0; step < this.ring.length; step += 1) {
        const slot = this.ring[(this.cursor + step) % this.ring.length]!;
        if (slot.length === 0) continue;
        for (let i = 0; i < slot.length; i += 2) leave(slot[i] as NonceTable, slot[i + 1] as string);
        if (admitted()) return (this.cursor + step + 1) * this.bucketMs;
      }
    }
    for (const entry of [...this.later].sort((a, b) => a.bucket - b.bucket)) {
      leave(entry.table, entry.key);
      if (admitted()) return (entry.bucket + 1) * this.bucketMs;
    }
    return Number.NaN;
  }

  /** Nonces and kept answer bytes of one key. */
  heldBy(apiKey: string): { readonly entries: number; readonly answerBytes: number } {
    const table = this.tables.get(apiKey);
    return { entries: table?.size ?? 0, answerBytes: table?.bytes ?? 0 };
  }

  has(apiKey: string, nonce: string): boolean {
    return this.tables.get(apiKey)?.has(nonce.toLowerCase()) ?? false;
  }

  lookup(apiKey: string, nonce: string, signature: string): ReplayLookup {
    const seen = this.tables.get(apiKey)?.get(nonce.toLowerCase());
    if (seen === undefined) return ABSENT;
    if (typeof seen === 'number') return seen === fingerprintOf(signature) ? RERUN : CONFLICT;
    if (seen.signature !== signature) return CONFLICT;
    return seen.unknown ? UNKNOWN : { kind: 'replay', answer: seen.answer() };
  }

  /** Every remembered nonce, to restore after a clean restart (see `restore`). */
  save(): SavedNonce[] {
    const saved: SavedNonce[] = [];
    if (Number.isNaN(this.cursor)) return saved;
    // Slot (cursor + step) mod size holds bucket cursor + step (they never wrap onto a live one).
    for (let step = 0; step < this.ring.length; step += 1) {
      const bucket = this.cursor + step;
      const slot = this.ring[bucket % this.ring.length]!;
      const expiresAt = (bucket + 1) * this.bucketMs - 1;
      for (let i = 0; i < slot.length; i += 2) {
        const entry = this.savedEntry(slot[i] as NonceTable, slot[i + 1] as string, expiresAt);
        if (entry !== null) saved.push(entry);
      }
    }
    for (const { bucket, table, key } of this.later) {
      const entry = this.savedEntry(table, key, (bucket + 1) * this.bucketMs - 1);
      if (entry !== null) saved.push(entry);
    }
    return saved;
  }

  private savedEntry(table: NonceTable, nonce: string, expiresAt: number): SavedNonce | null {
    const value = table.get(nonce);
    if (value === undefined) return null;
    return {
      apiKey: table.apiKey,
      nonce,
      expiresAt,
      value:
        typeof value === 'number'
          ? value
          : {
              signature: value.signature,
              status: value.status,
              body:
                value.body === null
                  ? null
                  : typeof value.body === 'string'
                    ? value.body
                    : value.body.toString('base64'),
              bytes: value.body !== null && typeof value.body !== 'string',
            },
    };
  }

  /** Remembers saved nonces again (those not expired at `now` and not already remembered). */
  restore(saved: readonly SavedNonce[], now: number): void {
    this.prune(now);
    for (const entry of saved) {
      if (entry.expiresAt < now || this.has(entry.apiKey, entry.nonce)) continue;
      const { value } = entry;
      if (typeof value === 'number') {
        this.insert(entry.apiKey, entry.nonce, entry.expiresAt, value);
        continue;
      }
      const kept = new KeptAnswer(value.signature);
      if (value.body === null) kept.unknown = true;
      const table = this.insert(entry.apiKey, entry.nonce, entry.expiresAt, kept);
      if (value.body !== null) {
        this.settle(kept, table, {
          status: value.status,
          body: value.bytes ? Buffer.from(value.body, 'base64') : value.body,
        });
      }
    }
  }

  /** Remembers a fresh request; the returned function records its answer (kept or ignored). */
  remember(
    apiKey: string,
    nonce: string,
    expiresAt: number,
    signature: string,
    retention: AnswerRetention,
  ): (answer: StoredAnswer) => void {
    if (retention === 'fingerprint') {
      this.insert(apiKey, nonce, expiresAt, fingerprintOf(signature));
      return ignoreAnswer;
    }
    const kept = new KeptAnswer(signature);
    const table = this.insert(apiKey, nonce, expiresAt, kept);
    return (answer) => this.settle(kept, table, answer);
  }

  rememberSession(apiKey: string, nonce: string, expiresAt: number): void {
    this.insert(apiKey, nonce, expiresAt, SESSION);
  }

  /** Forgets every nonce whose bucket lies wholly before `now`. */
  prune(now: number): void {
    const limit = Math.floor(now / this.bucketMs);
    if (Number.isNaN(this.cursor)) this.cursor = limit;
    if (limit <= this.cursor) return;
    const steps = Math.min(limit - this.cursor, this.ring.length);
    for (let step = 0; step < steps; step += 1)
      this.drain(this.ring[(this.cursor + step) % this.ring.length]!);
    this.cursor = limit;
    if (this.later.length > 0) this.bringCloser();
  }

  /** Moves the restored nonces now within the ring's span into it (past ones are forgotten). */
  private bringCloser(): void {
    const waiting = this.later;
    this.later = [];
    const expired: Array<NonceTable | string> = [];
    for (const entry of waiting) {
      if (entry.bucket < this.cursor) expired.push(entry.table, entry.key);
      else if (entry.bucket < this.cursor + this.ring.length)
        this.ring[entry.bucket % this.ring.length]!.push(entry.table, entry.key);
      else this.later.push(entry);
    }
    this.drain(expired);
  }

  private insert(apiKey: string, nonce: string, expiresAt: number, value: Remembered): NonceTable {
    let table = this.tables.get(apiKey);
    if (table === undefined) {
      table = new NonceTable(apiKey);
      this.tables.set(apiKey, table);
    }
    const key = nonce.toLowerCase();
    table.set(key, value);
    this.count += 1;
    const bucket = Math.floor(expiresAt / this.bucketMs);
    if (bucket >= this.cursor + this.ring.length) this.later.push({ bucket, table, key });
    else this.ring[bucket % this.ring.length]!.push(table, key);
    return table;
  }

  private settle(kept: KeptAnswer, table: NonceTable, answer: StoredAnswer): void {
    if (kept.body !== null) return;
    kept.status = answer.status;
    kept.body = answer.body;
    if (!kept.forgotten) {
      this.bytes += answer.body.length;
      table.bytes += answer.body.length;
    }
    const waiters = kept.waiters;
    kept.waiters = null;
    if (waiters !== null) for (const resolve of waiters) resolve({ status: kept.status, body: answer.body });
  }

  private drain(slot: Array<NonceTable | string>): void {
    for (let i = 0; i < slot.length; i += 2) {
      const table = slot[i] as NonceTable;
      const nonce = slot[i + 1] as string;
      const value = table.get(nonce);
      if (value === undefined) continue;
      table.delete(nonce);
      this.count -= 1;
      if (typeof value !== 'number') {
        value.forgotten = true;
        if (value.body !== null) {
          this.bytes -= value.body.length;
          table.bytes -= value.body.length;
        }
      }
      // An emptied table goes; a nonce of its key remembered later starts a new one.
      if (table.size === 0 && this.tables.get(table.apiKey) === table) this.tables.delete(table.apiKey);
    }
    slot.length = 0;
  }
}

function ignoreAnswer(_answer: StoredAnswer): void {}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The first 30 bits of a base64 signature: a small integer, stored without allocation. */
export function fingerprintOf(signature: string): number {
  let value = 0;
  for (let i = 0; i < 5; i += 1) value = value * 64 + Math.max(0, BASE64.indexOf(signature[i] ?? 'A'));
  return value;
}
