/**
 * Push channels: a registry of channel families and a fan-out that routes committed events to
 * subscribed WebSocket sessions. Other parts (portfolios, RFQ) add families the same way.
 *
 * Invariants:
 * - A family resolves a concrete channel name for a caller into routing topics (e.g. the
 *   caller's account) and an optional snapshot; it refuses what the caller may not see.
 * - Producers run once per committed batch, in sequence order, and build a payload only when
 *   someone is subscribed to the topic (`emit` takes a thunk).
 * - Every push carries `seq`, counting 1, 2, 3… per (connection, channel); the snapshot, when the
 *   family has one, is seq 1 with `snapshot: true`. A gap in seq means a lost push.
 * - After a snapshot a subscriber gets exactly the changes made after the state it shows. The
 *   core applies a command at once but publishes it only once durable, so a snapshot (read from
 *   the applied state) may already show commands still to be published: their pushes are not
 *   sent to that subscription (they would show an older state, or the same one twice). Families
 *   whose pushes render the state as it is when published (book, ticker) are exempt.
 * - One subscription per channel and subscriber: a family that takes other spellings of a name
 *   (a currency in any letter case) gives its canonical name (`ResolvedChannel.channel`), and
 *   names with one canonical name are one subscription, held, and pushed, under the name it was
 *   first subscribed with (`heldName` tells it).
 * - Deribit's interval suffixes (`.raw`, `.100ms`, `.agg2`) are spellings of a channel for the
 *   families that list them (`ChannelFamily.intervals`): `book.BTC-PERPETUAL.raw` is the channel
 *   `book.BTC-PERPETUAL`. Pushes go out as each command is published, whatever the suffix; a
 *   family lists an aggregated interval only when its pushes have the shape Deribit's aggregated
 *   pushes have (full state, or arrays), so a client reading them that way reads them right.
 */
import type { TSchema } from '@sinclair/typebox';
import { VenueError } from '../domain/errors.ts';
import { parseComboName } from '../market/combos.ts';
import type { Principal } from './auth/authenticator.ts';
import type { CommittedBatch } from './ports.ts';

/** A routing key: a channel name, scoped to an account for private channels. */
export type Topic = string;

export function topicFor(channel: string, accountId: number | null): Topic {
  return accountId === null ? channel : `${accountId}|${channel}`;
}

export interface ResolvedChannel {
  /**
   * The channel's canonical name, when the family takes other spellings of it (e.g. a currency in
   * any letter case): names with the same canonical name are one subscription. Absent: the name.
   */
  readonly channel?: string;
  readonly topics: readonly Topic[];
  /** The first push, taken at subscription time (e.g. open orders, the book). */
  readonly snapshot?: () => unknown;
  /**
   * The pushes render the state as it is when they are published, not as their command left it:
   * never older than a snapshot taken before, so the pushes of commands it shows are kept.
   */
  readonly pushesCurrentState?: boolean;
}

/** Deribit's channel intervals: `raw` pushes each change, the others aggregate. */
export type Interval = 'raw' | '100ms' | 'agg2';

const INTERVAL_SUFFIX = /\.(raw|100ms|agg2)$/;

/** For families whose pushes read right under any interval: full state, or arrays. */
export const ALL_INTERVALS: readonly Interval[] = ['raw', '100ms', 'agg2'];

/**
 * The refusal of a channel naming no listed instrument. A well-formed combo id is listed by a
 * signed request (src/api/methods/context.ts, instrumentOrCombo), not by a subscribe, which
 * resolves at once: the refusal says so, rather than that the combo does not exist.
 */
export function unknownInstrument(channel: string, instrumentName: string): VenueError {
  const message =
    parseComboName(instrumentName) === null
      ? `unknown instrument in ${channel}`
      : `combo ${instrumentName} in ${channel} is not listed yet: a signed request (its book, its ticker or an order) lists it, then it can be subscribed to`;
  return new VenueError('invalid_instrument', message, { field: 'channels' });
}

/** A private channel's subscriber: refused, naming `channels`, on a connection not signed in. */
export function requirePrincipal(principal: Principal | null, name: string): Principal {
  if (principal === null) {
    throw new VenueError('authorization_required', `${name} needs an authenticated connection`, {
      field: 'channels',
    });
  }
  return principal;
}

export type Held = (channel: string, accountId: number | null) => boolean;

export type Emit = (channel: string, accountId: number | null, data: () => unknown) => void;

export interface ChannelFamily {
  /** Documentation form, e.g. `user.orders.{kind}.{currency}`. */
  readonly pattern: string;
  readonly summary: string;
  readonly access: 'public' | 'private';
  /** Payload schema of a change push, for the AsyncAPI document. */
  readonly payload: TSchema;
  /** Payload schema of the snapshot (seq 1, `snapshot: true`), for families that send one. */
  readonly snapshotPayload?: TSchema;
  /** The interval suffixes its names also take (as spellings of the same channel); none: no suffix. */
  readonly intervals?: readonly Interval[];
  /** null when `name` is not of this family; throws a VenueError when refused. */
  resolve(name: string, principal: Principal | null): ResolvedChannel | null;
  /** Turns one committed batch into pushes; `held` tells whether anyone holds a channel now. */
  produce(batch: CommittedBatch, emit: Emit, held: Held): void;
}

export interface Subscriber {
  push(channel: string, seq: number, data: unknown, snapshot: boolean): void;
}

interface Subscription {
  readonly subscriber: Subscriber;
  /** The name the subscription is held under and its pushes carry: as first subscribed. */
  readonly channel: string;
  seq: number;
  /** The last command the snapshot shows (its pushes and those before are not sent), or -∞. */
  readonly shownSeq: number;
}

export class ChannelRegistry {
  private readonly families: ChannelFamily[] = [];

  register(family: ChannelFamily): void {
    if (this.families.some((existing) => existing.pattern === family.pattern)) {
      throw new Error(`channel ${family.pattern} is already registered`);
    }
    this.families.push(family);
  }

  list(): readonly ChannelFamily[] {
    return this.families;
  }

  resolve(
    name: string,
    principal: Principal | null,
  ): { family: ChannelFamily; resolved: ResolvedChannel } | null {
    const suffix = INTERVAL_SUFFIX.exec(name);
    if (suffix !== null) {
      const found = this.resolveWithInterval(name.slice(0, suffix.index), suffix[1] as Interval, principal);
      if (found !== null) return found;
    }
    for (const family of this.families) {
      const resolved = family.resolve(name, principal);
      if (resolved !== null) return { family, resolved };
    }
    return null;
  }

  /** `base` with an interval suffix: the channel `base`, for a family that takes the interval. */
  private resolveWithInterval(
    base: string,
    interval: Interval,
    principal: Principal | null,
  ): { family: ChannelFamily; resolved: ResolvedChannel } | null {
    for (const family of this.families) {
      if (family.intervals === undefined) continue;
      const resolved = resolveSpelling(family, base, `${base}.${interval}`, principal);
      if (resolved === null) continue;
      if (!family.intervals.includes(interval)) {
        const taken = family.intervals.map((each) => `${base}.${each}`).join(' or ');
        throw new VenueError(
          'invalid_params',
          `${base}.${interval}: ${family.pattern} pushes each change on its own as it is committed (Deribit's raw), not aggregated; subscribe ${taken}`,
          { field: 'channels', channel: `${base}.${interval}`, intervals: family.intervals },
        );
      }
      return { family, resolved: { ...resolved, channel: resolved.channel ?? base } };
    }
    return null;
  }
}

/**
 * `family.resolve(base)` for the name `spelled` (base with a suffix): a refusal names the channel
 * as the client spelled it.
 */
function resolveSpelling(
  family: ChannelFamily,
  base: string,
  spelled: string,
  principal: Principal | null,
): ResolvedChannel | null {
  try {
    return family.resolve(base, principal);
  } catch (error) {
    if (!(error instanceof VenueError) || error.data?.field !== 'channels') throw error;
    throw new VenueError(error.errorName, error.message.replaceAll(base, spelled), {
      ...error.data,
      channel: spelled,
    });
  }
}

export class Fanout {
  private readonly byTopic = new Map<Topic, Set<Subscription>>();
  /** Each subscriber's subscriptions by canonical name. */
  private readonly bySubscriber = new Map<
    Subscriber,
    Map<string, { sub: Subscription; topics: readonly Topic[] }>
  >();

  private publishedSeq = 0;
  private readonly appliedSeq: () => number;

  /**
   * `appliedSeq`: the seq of the last command applied to the state snapshots read. Without it the
   * state read is taken to be the published one (a core that publishes as it applies).
   */
  constructor(
    private readonly channels: ChannelRegistry,
    appliedSeq?: () => number,
  ) {
    this.appliedSeq = appliedSeq ?? (() => this.publishedSeq);
  }

  /**
   * Adds a subscription under `channel`; pushes the snapshot first. Returns false if the channel
   * is already subscribed (under this name or another spelling of it).
   */
  subscribe(subscriber: Subscriber, channel: string, resolved: ResolvedChannel): boolean {
    let own = this.bySubscriber.get(subscriber);
    if (own === undefined) {
      own = new Map();
      this.bySubscriber.set(subscriber, own);
    }
    const canonical = resolved.channel ?? channel;
    if (own.has(canonical)) return false;
    const shownSeq =
      resolved.snapshot === undefined || resolved.pushesCurrentState === true
        ? Number.NEGATIVE_INFINITY
        : this.appliedSeq();
    const sub: Subscription = { subscriber, channel, seq: 0, shownSeq };
    own.set(canonical, { sub, topics: resolved.topics });
    for (const topic of resolved.topics) {
      let set = this.byTopic.get(topic);
      if (set === undefined) {
        set = new Set();
        this.byTopic.set(topic, set);
      }
      set.add(sub);
    }
    if (resolved.snapshot) subscriber.push(channel, ++sub.seq, resolved.snapshot(), true);
    return true;
  }

  /** The name the channel of canonical name `canonical` is held under, if subscribed. */
  heldName(subscriber: Subscriber, canonical: string): string | undefined {
    return this.bySubscriber.get(subscriber)?.get(canonical)?.sub.channel;
  }

  /** The subscriptions `subscriber` holds. */
  subscriptionCount(subscriber: Subscriber): number {
    return this.bySubscriber.get(subscriber)?.size ?? 0;
  }

  /**
   * Removes the subscription whose canonical name, or else whose held name, is `channel`.
   * Returns the name it was held under, undefined if there was none.
   */
  unsubscribe(subscriber: Subscriber, channel: string): string | undefined {
    const own = this.bySubscriber.get(subscriber);
    if (own === undefined) return undefined;
    let canonical: string | undefined = channel;
    let entry = own.get(channel);
    if (entry === undefined) {
      canonical = undefined;
      for (const [key, held] of own) {
        if (held.sub.channel === channel) {
          canonical = key;
          entry = held;
          break;
        }
      }
    }
    if (canonical === undefined || entry === undefined) return undefined;
    own.delete(canonical);
    for (const topic of entry.topics) {
      const set = this.byTopic.get(topic);
      set?.delete(entry.sub);
      if (set?.size === 0) this.byTopic.delete(topic);
    }
    return entry.sub.channel;
  }

  unsubscribeAll(subscriber: Subscriber): void {
    for (const canonical of [...(this.bySubscriber.get(subscriber)?.keys() ?? [])])
      this.unsubscribe(subscriber, canonical);
    this.bySubscriber.delete(subscriber);
  }

  /** The names the subscriber's subscriptions are held under. */
  channelsOf(subscriber: Subscriber): string[] {
    return [...(this.bySubscriber.get(subscriber)?.values() ?? [])].map((entry) => entry.sub.channel);
  }

  /** Routes one committed batch through every family's producer. */
  publish(batch: CommittedBatch): void {
    this.publishedSeq = batch.seq;
    if (this.byTopic.size === 0) return;
    const emit: Emit = (channel, accountId, data) => {
      const subs = this.byTopic.get(topicFor(channel, accountId));
      if (subs === undefined) return;
      let payload: unknown;
      let built = false;
      for (const sub of subs) {
        if (batch.seq <= sub.shownSeq) continue;
        if (!built) {
          payload = data();
          built = true;
        }
        sub.subscriber.push(sub.channel, ++sub.seq, payload, false);
      }
    };
    const held: Held = (channel, accountId) => this.byTopic.has(topicFor(channel, accountId));
    for (const family of this.channels.list()) family.produce(batch, emit, held);
  }

  get topicCount(): number {
    return this.byTopic.size;
  }
}
