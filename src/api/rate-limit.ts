/**
 * Per-key credit buckets (Deribit-style): one bucket for matching-engine methods, one for the
 * rest. A bucket holds at most `burst` requests' worth of credit and refills at `perSecond`.
 * Time comes from the injected clock, so the refill is tested without sleeping.
 *
 * A bucket that has refilled to its burst is the same as no bucket, so such buckets are dropped
 * whenever the map has doubled since the last sweep: one per client address or key ever seen
 * would otherwise stay for the life of the process.
 */
import { VenueError } from '../domain/errors.ts';

export interface BucketLimits {
  readonly perSecond: number;
  readonly burst: number;
}

export interface RateLimitSettings {
  readonly enabled: boolean;
  readonly matching: BucketLimits;
  readonly nonMatching: BucketLimits;
}

interface Bucket {
  credits: number;
  updatedAt: number;
  /** When the bucket will be full again (and may be dropped). */
  fullAt: number;
}

const SWEEP_MIN = 4096;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private sweepAt = SWEEP_MIN;

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly now: () => number,
  ) {}

  /**
   * Takes one request's credit from the key's bucket or throws `too_many_requests` (429).
   * `overrides` are the key's own limits, if it has any.
   */
  take(
    apiKey: string,
    matching: boolean,
    overrides?: { readonly matching?: BucketLimits; readonly nonMatching?: BucketLimits } | null,
  ): void {
    if (!this.settings.enabled) return;
    const limits = matching
      ? (overrides?.matching ?? this.settings.matching)
      : (overrides?.nonMatching ?? this.settings.nonMatching);
    const id = `${matching ? 'm' : 'n'}:${apiKey}`;
    const now = this.now();
    let bucket = this.buckets.get(id);
    if (bucket === undefined) {
      if (this.buckets.size >= this.sweepAt) this.sweep(now);
      bucket = { credits: limits.burst, updatedAt: now, fullAt: now };
      this.buckets.set(id, bucket);
    } else {
      const elapsed = Math.max(0, now - bucket.updatedAt);
      bucket.credits = Math.min(limits.burst, bucket.credits + (elapsed * limits.perSecond) / 1000);
      bucket.updatedAt = now;
    }
    if (bucket.credits < 1) {
      const retryAfterMs = Math.ceil(((1 - bucket.credits) * 1000) / limits.perSecond);
      // The field at fault is the method: its bucket (`bucket`) is empty for now.
      throw new VenueError('too_many_requests', undefined, {
        field: 'method',
        bucket: matching ? 'matching' : 'non_matching',
        retryAfterMs,
      });
    }
    bucket.credits -= 1;
    bucket.fullAt = now + Math.ceil(((limits.burst - bucket.credits) * 1000) / limits.perSecond);
  }

  /** Buckets held (full ones are dropped now and then). */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    for (const [id, bucket] of this.buckets) if (bucket.fullAt <= now) this.buckets.delete(id);
    this.sweepAt = Math.max(SWEEP_MIN, this.buckets.size * 2);
  }
}
