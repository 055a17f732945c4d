/**
 * One WebSocket connection's session (ws-gateway.ts holds the invariants): its principal,
 * subscriptions and their held pushes, heartbeats, cancel-on-disconnect, the slow-consumer limit
 * of its queue, and its part of a shutdown.
 */
import type { WebSocket } from 'ws';
import type { UnstampedCommand } from '../core/commands.ts';
import type { CommandResult } from '../core/events.ts';
import { VenueError } from '../domain/errors.ts';
import { jsonBytes } from '../store/json-bytes.ts';
import { disabledKeyError, type Principal } from './auth/authenticator.ts';
import type { ChannelRegistry, Subscriber } from './channels.ts';
import { type DispatchOutcome, parseEnvelope, salvageRid } from './dispatcher.ts';
import type { SessionHandle } from './registry.ts';
import { mapError } from './wire-errors.ts';
import type { SlowConsumerDrop, WsGatewayDeps } from './ws-gateway.ts';

/**
 * How long a connection closed as a slow consumer (past its own limit) has, on the service clock,
 * to read what is queued and the 1008 close frame behind it before it is cut.
 */
export const SLOW_CONSUMER_GRACE_MS = 1_000;
/**
 * How long a connection's queue may stay past its limit without shrinking (on the service clock)
 * before it is judged slow: one command can push thousands of messages in a turn (a cancel_all
 * of 1,000 orders on two order channels queues 2.4 MB), which a peer that reads drains within it.
 */
export const SLOW_CONSUMER_PATIENCE_MS = 1_000;
/** Past this many times its limit a queue is judged slow at once: the connection's memory bound. */
export const SLOW_CONSUMER_BURST_FACTOR = 16;
/** The close of a slow consumer: 1008, policy violation. */
const SLOW_CONSUMER = 1008;
const SLOW_CONSUMER_REASON = 'slow consumer';

/** The placed-order set is pruned to the open ones when it reaches this size (then twice its size). */
const PLACED_PRUNE_MIN = 1024;
/** Ended cancel-on-disconnect sessions a connection remembers (one per key switch). */
const ENDED_SESSIONS_KEPT = 16;

/** A refusal of the core as the VenueError the dispatcher answers with. */
function succeeded(result: CommandResult): void {
  if (!result.ok) throw new VenueError(result.error.name, result.error.message, result.error.data);
}

/** Messages are JSON text: a Buffer would otherwise go out as a binary frame. */
const TEXT_FRAME = { binary: false } as const;

/** The close of every connection at a shutdown: 1001, going away. */
export const GOING_AWAY = 1001;
export const GOING_AWAY_REASON = 'server shutting down';
/** The refusal of a message that comes during a shutdown: the words HTTP answers with (http-routes.ts). */
const SHUTTING_DOWN =
  'the service is shutting down: the request was not run; send it again once the service is back';

/** The pushes of the channels one subscribe added, held until that subscribe's answer is sent. */
interface Hold {
  readonly channels: string[];
  readonly messages: unknown[];
}

export class Session implements SessionHandle, Subscriber {
  principal: Principal | null = null;
  /** The cancel-on-disconnect session id in the core while it is on, else null. */
  codSession: string | null = null;
  private codSessions = 0;
  /** The last `set_cancel_on_disconnect` submitted: durable once this resolves. */
  private codCommitted: Promise<void> = Promise.resolve();
  private heartbeatCancel: (() => void) | null = null;
  private heartbeatMs = 0;
  private heardSinceTestRequest = true;
  private closed = false;
  /** Messages being handled: dispatched and not yet answered (a shutdown waits for them). */
  private inFlight = 0;
  /** The gateway is shutting down: messages are refused, and the connection closes once idle. */
  private shuttingDown = false;
  /** A close frame (1001, or 1008 for a slow consumer) has gone out: nothing more may be sent. */
  private wentAway = false;
  /** Dropped as a slow consumer (reported once). */
  private slow = false;
  /** Looks at a queue past its limit again after the patience; null when none is pending. */
  private watchCancel: (() => void) | null = null;
  /** The queue when the pending watch was armed: it must have shrunk by the time the watch looks. */
  private watchedQueue = 0;
  /** Cuts a slow consumer once its grace is over; null when none is pending. */
  private cutCancel: (() => void) | null = null;
  /** Terminated by the gateway: its queue went with the TCP stream, whenever its close event comes. */
  private cut = false;
  /** What was queued for this connection when last looked at: its part of the gateway's total. */
  queued = 0;
  private corked = false;
  /** By channel: the hold of the subscribe whose answer is on its way (see `subscribe`). */
  private readonly holds = new Map<string, Hold>();
  /** The hold made while the message being received was dispatched, for `receive` to take. */
  private dispatchedHold: Hold | null = null;
  /** The rate-limit identity before authentication (made once, not per message). */
  private readonly anonymousKey: string;
  /** Orders this connection placed under the current key that may still be open. */
  private placedOrders = new Set<string>();
  /**
   * Cancel-on-disconnect sessions of earlier keys on this connection, ended by a key switch, with
   * their accounts: an order sent under one and placed after the switch is cancelled as it lands
   * (the switch's cancel went out before the order was known here). The last few are kept.
   */
  private readonly endedSessions = new Map<string, number>();
  private prunePlacedAt = PLACED_PRUNE_MIN;
  private readonly uncork = () => {
    this.corked = false;
    this.stream?.uncork();
    // The turn's writes have been offered to the kernel: what it did not take stays queued, and
    // that (not a burst the kernel takes at once) is what the limits judge.
    const queued = this.socket.bufferedAmount;
    if (queued > this.maxBufferedBytes && !this.closed && !this.wentAway) {
      if (queued > this.maxBufferedBytes * SLOW_CONSUMER_BURST_FACTOR) this.dropSlow('connection', queued);
      else if (this.watchCancel === null) this.watchQueue(queued);
    }
    this.queueChanged(this);
  };

  /**
   * A queue past its limit is a slow consumer only if it has not shrunk when looked at again a
   * patience later: a peer that reads drains a burst, one that stopped does not.
   */
  private watchQueue(queued: number): void {
    this.watchedQueue = queued;
    this.watchCancel = this.deps.clock.schedule(this.deps.clock.now() + SLOW_CONSUMER_PATIENCE_MS, () => {
      this.watchCancel = null;
      if (this.closed || this.wentAway || this.cut) return;
      const now = this.socket.bufferedAmount;
      if (now <= this.maxBufferedBytes) return;
      if (now < this.watchedQueue) this.watchQueue(now);
      else this.dropSlow('connection', now);
    });
  }

  constructor(
    readonly id: number,
    private readonly socket: WebSocket,
    private readonly deps: WsGatewayDeps,
    private readonly maxBufferedBytes: number,
    private readonly maxSubscriptions: number,
    readonly address: string | undefined,
    /** Told when the session authenticates, so its key is checked periodically. */
    private readonly watchKey: () => void,
    /** Told after messages were queued, to count them in the total (and keep to its budget). */
    private readonly queueChanged: (session: Session) => void,
  ) {
    this.anonymousKey = address === undefined ? `ws:${id}` : `ip:${address}`;
  }

  /** What is queued for the peer now (ws's own count, and the TCP stream's); none once cut. */
  get bufferedAmount(): number {
    return this.cut ? 0 : this.socket.bufferedAmount;
  }

  get cancelOnDisconnect(): boolean {
    return this.codSession !== null;
  }

  /**
   * Another key ends the previous key's session on this connection: its subscriptions go, its
   * cancel-on-disconnect runs, and the new key starts afresh. A key's session starts with
   * cancel-on-disconnect on when its default account's `account` scope is on (resolves once that
   * is durable), off otherwise; authenticating again with the same key changes nothing.
   */
  authenticate(principal: Principal): Promise<void> {
    const previous = this.principal;
    if (previous !== null && previous.apiKey !== principal.apiKey) {
      this.deps.fanout.unsubscribeAll(this);
      this.cancelPlaced();
      if (this.codSession !== null) {
        this.endedSessions.set(this.codSession, previous.defaultAccountId);
        if (this.endedSessions.size > ENDED_SESSIONS_KEPT)
          this.endedSessions.delete(this.endedSessions.keys().next().value!);
      }
      // The session's orders were all cancelled by the command just submitted (applied at once).
      this.codSession = null;
      this.placedOrders = new Set();
      this.prunePlacedAt = PLACED_PRUNE_MIN;
    }
    this.principal = principal;
    this.watchKey();
    const starts = previous === null || previous.apiKey !== principal.apiKey;
    if (starts && this.deps.reads.accountCancelOnDisconnect(principal.defaultAccountId)) {
      return this.setCancelOnDisconnect(true);
    }
    return Promise.resolve();
  }

  placed(orderId: string, codSession: string | null): Promise<void> | undefined {
    const endedAccount = codSession === null ? undefined : this.endedSessions.get(codSession);
    if (endedAccount !== undefined) {
      // Sent under a key whose session a switch ended, with cancel-on-disconnect on: it goes too.
      this.submit({
        type: 'cancel_all',
        accountId: endedAccount,
        orderIds: [orderId],
        cancelReason: 'cancel_on_disconnect',
      });
      return undefined;
    }
    if (this.closed) {
      // Placed while the session was ending: its cancel-on-disconnect has already gone out.
      if (this.codSession !== null && this.principal !== null) {
        this.submit({
          type: 'cancel_all',
          accountId: this.principal.defaultAccountId,
          orderIds: [orderId],
          cancelReason: 'cancel_on_disconnect',
        });
      }
      return undefined;
    }
    this.placedOrders.add(orderId);
    if (this.placedOrders.size >= this.prunePlacedAt) this.prunePlaced();
    // Sent before cancel-on-disconnect was turned on (or under an earlier id): it joins now, and
    // is answered once that is durable. A refused join is reported, and the order still answered.
    if (this.codSession !== null && codSession !== this.codSession) {
      return this.joinCod([orderId]).catch(this.deps.onUnexpected);
    }
    return undefined;
  }

  /** Keeps the placed orders still open, and open orders they made (which join the set). */
  private prunePlaced(): void {
    const principal = this.principal;
    const kept = new Set<string>();
    if (principal !== null) {
      for (const order of this.deps.reads.openOrders(principal.defaultAccountId, {})) {
        if (
          this.placedOrders.has(order.orderId) ||
          (order.triggerOrderId !== null && this.placedOrders.has(order.triggerOrderId)) ||
          (order.primaryOrderId !== null && this.placedOrders.has(order.primaryOrderId))
        )
          kept.add(order.orderId);
      }
    }
    this.placedOrders = kept;
    this.prunePlacedAt = Math.max(PLACED_PRUNE_MIN, kept.size * 2);
  }

  /** Cancel-on-disconnect of the current key: the orders of its session (this connection placed). */
  private cancelPlaced(): void {
    if (this.codSession === null || this.principal === null || this.placedOrders.size === 0) return;
    this.submit({
      type: 'cancel_all',
      accountId: this.principal.defaultAccountId,
      codSession: this.codSession,
      cancelReason: 'cancel_on_disconnect',
    });
  }

  private submit(command: UnstampedCommand): void {
    this.deps.commands.submit(command).catch(this.deps.onUnexpected);
  }

  /** Orders placed by this connection join its session in the core. */
  private joinCod(orderIds: string[]): Promise<void> {
    const command: UnstampedCommand = {
      type: 'set_cancel_on_disconnect',
      accountId: this.principal!.defaultAccountId,
      session: this.codSession!,
      enabled: true,
      orderIds,
    };
    this.codCommitted = this.deps.commands.submit(command).then(succeeded);
    return this.codCommitted;
  }

  /**
   * Turns cancel-on-disconnect on (a new session id; the orders placed so far join it) or off (its
   * orders leave it), in the core: resolves once that is durable, so an answered `enable` holds
   * across a crash. The orders placed from now on carry the id (`codSession`).
   */
  setCancelOnDisconnect(enabled: boolean): Promise<void> {
    const principal = this.principal;
    if (principal === null || enabled === (this.codSession !== null)) return this.codCommitted;
    if (enabled) {
      this.codSession = `${this.deps.codSessionPrefix ?? '0'}.${this.id}.${++this.codSessions}`;
      this.joinCod([...this.placedOrders]);
      return this.codSettled();
    }
    const session = this.codSession!;
    this.codSession = null;
    this.codCommitted = this.deps.commands
      .submit({
        type: 'set_cancel_on_disconnect',
        accountId: principal.defaultAccountId,
        session,
        enabled: false,
      })
      .then(succeeded);
    return this.codCommitted;
  }

  /**
   * Resolves once the last session command is durable, including the joins of orders that were
   * in flight when `enable` came and were placed while it committed (their commands went first,
   * so their joins are submitted before this looks again).
   */
  private async codSettled(): Promise<void> {
    let last: Promise<void>;
    do {
      last = this.codCommitted;
      await last;
    } while (last !== this.codCommitted);
  }

  setHeartbeat(intervalSec: number | null): void {
    this.heartbeatCancel?.();
    this.heartbeatCancel = null;
    if (intervalSec === null) return;
    this.heartbeatMs = intervalSec * 1000;
    this.heardSinceTestRequest = true;
    this.scheduleHeartbeat();
  }

  private scheduleHeartbeat(): void {
    this.heartbeatCancel = this.deps.clock.schedule(this.deps.clock.now() + this.heartbeatMs, () => {
      if (this.closed) return;
      if (!this.heardSinceTestRequest) {
        // A peer that stopped answering may not answer the close handshake either (ws waits
        // 30 s for it): the session ends now, so cancel-on-disconnect does not wait.
        this.onClose();
        this.socket.close(1000, 'heartbeat test_request not answered');
        return;
      }
      this.heardSinceTestRequest = false;
      this.send({ method: 'heartbeat', params: { type: 'test_request' } });
      this.scheduleHeartbeat();
    });
  }

  /**
   * All or nothing: every channel, and then the subscription cap, is checked before any is
   * subscribed. A channel already held (under this name or another spelling) adds nothing; the
   * answer lists each channel once, under the name its pushes carry. The snapshots (and any push
   * that follows them) of the channels this call adds are held until its own answer has been
   * sent, so the client reads the answer first and each channel's sequence from 1, however many
   * subscribes are on their way. Called while `receive` dispatches (the handler runs within the
   * synchronous part of `Dispatcher.dispatch`), which takes the hold to release with the answer.
   */
  async subscribe(names: readonly string[]): Promise<string[]> {
    const fanout = this.deps.fanout;
    const resolved = names.map((name, index) => {
      const found = resolveAt(this.deps.channels, name, this.principal, index);
      if (found === null)
        throw new VenueError('invalid_params', `unknown channel ${name}`, {
          field: `channels[${index}]`,
          channel: name,
        });
      if (found.family.access === 'private' && this.principal === null) {
        throw new VenueError('authorization_required', `${name} needs public/auth first`, {
          field: `channels[${index}]`,
        });
      }
      return found.resolved;
    });
    const canonical = resolved.map((channel, i) => channel.channel ?? names[i]!);
    const adding = new Set(canonical.filter((channel) => fanout.heldName(this, channel) === undefined));
    const subscribed = fanout.subscriptionCount(this);
    if (subscribed + adding.size > this.maxSubscriptions) {
      throw new VenueError(
        'invalid_params',
        `channels: ${adding.size} more would hold ${subscribed + adding.size} subscriptions on this connection, over its limit of ${this.maxSubscriptions}; unsubscribe some first`,
        { field: 'channels', limit: this.maxSubscriptions, subscribed, adding: adding.size },
      );
    }
    const hold: Hold = { channels: [], messages: [] };
    const answer = new Set<string>();
    for (const [i, name] of names.entries()) {
      const held = fanout.heldName(this, canonical[i]!);
      if (held !== undefined) {
        answer.add(held);
        continue;
      }
      // Held from the snapshot on, which `fanout.subscribe` pushes.
      this.holds.set(name, hold);
      fanout.subscribe(this, name, resolved[i]!);
      hold.channels.push(name);
      answer.add(name);
    }
    if (hold.channels.length > 0) this.dispatchedHold = hold;
    return [...answer];
  }

  /**
   * Removes the named channels, in any spelling; returns them under the names they were held
   * under (a name not held is left out).
   */
  unsubscribe(names: readonly string[]): string[] {
    const removed: string[] = [];
    for (const name of names) {
      const gone = this.deps.fanout.unsubscribe(this, this.canonicalName(name));
      if (gone !== undefined) removed.push(gone);
    }
    return removed;
  }

  /** The canonical name of a channel, or the name itself when it no longer resolves. */
  private canonicalName(name: string): string {
    try {
      return this.deps.channels.resolve(name, this.principal)?.resolved.channel ?? name;
    } catch {
      return name;
    }
  }

  unsubscribeAll(): void {
    this.deps.fanout.unsubscribeAll(this);
  }

  push(channel: string, seq: number, data: unknown, snapshot: boolean): void {
    const params = snapshot ? { channel, seq, snapshot: true, data } : { channel, seq, data };
    const hold = this.holds.size === 0 ? undefined : this.holds.get(channel);
    if (hold !== undefined) hold.messages.push({ method: 'subscription', params });
    else this.send({ method: 'subscription', params });
  }

  /** Sends what one subscribe held back, in order; called once its answer has gone out. */
  private release(hold: Hold): void {
    for (const channel of hold.channels) if (this.holds.get(channel) === hold) this.holds.delete(channel);
    for (const message of hold.messages) this.send(message);
  }

  send(message: unknown): void {
    if (this.closed || this.wentAway) return;
    const stream = this.stream;
    if (stream === undefined) {
      // No TCP stream under it (an in-process socket): its queue is judged before each message.
      const queued = this.socket.bufferedAmount;
      if (queued > this.maxBufferedBytes) {
        this.dropSlow('connection', queued);
        return;
      }
      this.socket.send(jsonBytes(message), TEXT_FRAME);
      this.queueChanged(this);
      return;
    }
    // Answers released together (one group commit) leave in one write instead of one syscall
    // each: the TCP stream stays corked until the microtasks of this turn have run, and its queue
    // is judged then (`uncork`).
    if (!this.corked) {
      this.corked = true;
      stream.cork();
      process.nextTick(this.uncork);
    }
    this.socket.send(jsonBytes(message), TEXT_FRAME);
  }

  /**
   * A slow consumer: reported (once), sent nothing more, its session ended as on a disconnect, and
   * closed with 1008 behind what is queued. Past its own limit it is cut after the grace (a peer
   * that reads on gets the data and the close frame); for the total budget at once, since its
   * memory is what has to go (the close frame then never leaves: it cannot pass a full queue).
   */
  dropSlow(reason: SlowConsumerDrop['reason'], queued: number): void {
    if (!this.slow) {
      this.slow = true;
      this.deps.onSlowConsumer?.({
        connection: this.id,
        address: this.address ?? null,
        bufferedBytes: queued,
        reason,
      });
      const wasOpen = !this.wentAway;
      this.wentAway = true;
      this.onClose();
      if (reason === 'connection') {
        // Armed before the close: a peer that answers at once (a fake) closes within the call.
        this.cutCancel = this.deps.clock.schedule(this.deps.clock.now() + SLOW_CONSUMER_GRACE_MS, () => {
          this.cutCancel = null;
          this.terminate();
        });
      }
      if (wasOpen) this.socket.close(SLOW_CONSUMER, SLOW_CONSUMER_REASON);
    }
    if (reason === 'budget') this.terminate();
  }

  private terminate(): void {
    this.cut = true;
    this.socket.terminate();
  }

  /** The TCP connection has closed: nothing is left to cut. */
  closedForGood(): void {
    this.cutCancel?.();
    this.cutCancel = null;
    this.onClose();
  }

  /** The TCP stream under the WebSocket (ws keeps it in `_socket`; absent in fakes). */
  private get stream(): { cork(): void; uncork(): void } | undefined {
    return (this.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket ?? undefined;
  }

  /**
   * Refuses a binary frame, unread: `bad_request`, charged as a message that is not an envelope
   * (`chargeRefusal`), so a flood of them meets the rate limit as text ones do.
   */
  refuseBinary(): void {
    if (this.closed) return;
    this.heardSinceTestRequest = true;
    this.refuseCharged(
      new VenueError('bad_request', 'binary frames are not supported', { field: 'message' }),
      null,
    );
  }

  /** Answers a message that is not an envelope with its refusal, charged a credit as over HTTP (`chargeRefusal`). */
  private refuseCharged(refusal: unknown, rid: number | null): void {
    const charged = this.deps.dispatcher.chargeRefusal(refusal, this.principal, this.anonymousKey);
    this.send({ rid, error: mapError(charged, this.deps.onUnexpected).error });
  }

  /** Answers one message (resolves once answered). Not async: see `Dispatcher.dispatch`. */
  receive(raw: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.heardSinceTestRequest = true;
    if (this.shuttingDown) {
      this.refuseForShutdown(raw);
      return Promise.resolve();
    }
    let parsed: unknown;
    try {
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new VenueError('parse_error', 'the message is not JSON', { field: 'message' });
      }
      const envelope = parseEnvelope(parsed, 'message');
      const principal = this.principal;
      if (
        principal !== null &&
        this.deps.dispatcher.isPrivate(envelope.method) &&
        !(this.deps.keyWorks?.(principal.apiKey) ?? true)
      ) {
        // Refused as over HTTP; the session then ends, as the periodic check would end it.
        this.send({ rid: envelope.rid, error: mapError(disabledKeyError('apiKey')).error });
        this.endForDisabledKey();
        return Promise.resolve();
      }
      const answered = this.deps.dispatcher.dispatch(envelope, {
        principal: this.principal,
        transport: 'ws',
        session: this,
        anonymousKey: this.anonymousKey,
      });
      this.inFlight++;
      const hold = this.dispatchedHold;
      if (hold === null) return answered.then(this.answerOutcome, this.answerUnexpected);
      this.dispatchedHold = null;
      return answered.then(
        (outcome) => {
          this.sendOutcome(outcome);
          this.release(hold);
          this.answered();
        },
        (error: unknown) => {
          this.sendUnexpected(error);
          this.release(hold);
          this.answered();
        },
      );
    } catch (error) {
      this.refuseCharged(error, salvageRid(parsed));
      return Promise.resolve();
    }
  }

  // Made once per session, not per message; neither lets an error escape as an unhandled rejection.
  private readonly sendOutcome = (outcome: DispatchOutcome): void => {
    try {
      this.send(outcome.answer);
    } catch (error) {
      this.send({ rid: outcome.answer.rid, error: mapError(error, this.deps.onUnexpected).error });
    }
  };
  private readonly sendUnexpected = (error: unknown): void => {
    this.send({ rid: null, error: mapError(error, this.deps.onUnexpected).error });
  };
  private readonly answerOutcome = (outcome: DispatchOutcome): void => {
    this.sendOutcome(outcome);
    this.answered();
  };
  private readonly answerUnexpected = (error: unknown): void => {
    this.sendUnexpected(error);
    this.answered();
  };

  /** One call's answer (and what its subscribe held back) has been sent. */
  private answered(): void {
    if (--this.inFlight === 0 && this.shuttingDown) this.goAway();
  }

  /** A message that came during the shutdown: refused, under its rid when it has one, not run. */
  private refuseForShutdown(raw: string): void {
    let rid: number | null = null;
    try {
      rid = salvageRid(JSON.parse(raw));
    } catch {
      // Not JSON: answered with rid null, as any message that is not.
    }
    this.send({ rid, error: mapError(new VenueError('unavailable', SHUTTING_DOWN)).error });
  }

  /**
   * The gateway is shutting down: later messages are refused, and the connection closes with
   * 1001 once the calls in flight have been answered (at once when there are none).
   */
  shutDown(): void {
    this.shuttingDown = true;
    if (this.inFlight === 0) this.goAway();
  }

  /** The close frame, after everything already sent (ws writes a connection's frames in order). */
  private goAway(): void {
    if (this.closed || this.wentAway) return;
    this.wentAway = true;
    this.heartbeatCancel?.();
    this.heartbeatCancel = null;
    this.socket.close(GOING_AWAY, GOING_AWAY_REASON);
  }

  /** The shutdown's grace is over: the connection is closed (1001 if not yet sent) and cut. */
  cutOff(): void {
    this.goAway();
    this.terminate();
  }

  /**
   * The periodic check: ends the session when its key no longer works. True while the session
   * goes on authenticated. A failing key store is reported and the session left as it is.
   */
  checkKey(): boolean {
    if (this.closed || this.principal === null) return false;
    let works: boolean;
    try {
      works = this.deps.keyWorks?.(this.principal.apiKey) ?? true;
    } catch (error) {
      this.deps.onUnexpected(error);
      return true;
    }
    if (!works) this.endForDisabledKey();
    return works;
  }

  /**
   * The key was disabled: the session ends as on a disconnect (its subscriptions dropped, its
   * cancel-on-disconnect run) and the connection closes with 1008, policy violation.
   */
  private endForDisabledKey(): void {
    this.onClose();
    this.socket.close(1008, 'the API key is disabled');
  }

  onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.watchCancel?.();
    this.watchCancel = null;
    this.heartbeatCancel?.();
    this.deps.fanout.unsubscribeAll(this);
    this.cancelPlaced();
    this.placedOrders = new Set();
  }
}

/** Resolves the channel at `channels[index]`; a refusal naming `channels` names its index too. */
function resolveAt(channels: ChannelRegistry, name: string, principal: Principal | null, index: number) {
  try {
    return channels.resolve(name, principal);
  } catch (error) {
    if (error instanceof VenueError && error.data?.field === 'channels') {
      throw new VenueError(error.errorName, error.message, { ...error.data, field: `channels[${index}]` });
    }
    throw error;
  }
}
