/**
 * Drives the RFQ desk together with the real engine (`Venue`) on a virtual clock, the way the
 * composite core does: advance the desk at the stamp, run the command, let the desk react to
 * the engine's events. Not production code.
 */
import assert from 'node:assert/strict';
import type { CommandStamp, UnstampedCommand } from '../../src/core/commands.ts';
import type { CoreEvent } from '../../src/core/events.ts';
import { Harness, optionSpec, perpetualSpec, T0 } from '../../src/engine/testkit.ts';
import type { Venue } from '../../src/engine/venue.ts';
import { RfqDesk } from '../../src/rfq/desk.ts';
import { marketOf } from '../../src/rfq/market.ts';
import type {
  QuoteHedgeInput,
  QuoteLegInput,
  RfqCommand,
  RfqEvent,
  RfqRecord,
  RfqValue,
  UnstampedRfqCommand,
} from '../../src/rfq/types.ts';

export { T0 };

export const CALL_70 = 'BTC-27DEC26-70000-C';
export const CALL_75 = 'BTC-27DEC26-75000-C';
export const PUT_70 = 'BTC-27DEC26-70000-P';
export const PERP = 'BTC-PERPETUAL';

export const TAKER = 1;
export const MAKER_A = 2;
export const MAKER_B = 3;
export const MAKER_C = 4;
/** A second account of the taker's user (user TAKER): allocations may go there. */
export const TAKER_2 = 5;
/** Block minimum of the harness options: one lot, so tests of the mechanics use small sizes. */
export const ONE_LOT_BLOCK = { blockTradeMinTradeAmount: '0.1' };
export const DESK_A = 'desk-a';
export const DESK_B = 'desk-b';
export const DESK_C = 'desk-c';

export type DeskResult = ReturnType<RfqDesk['execute']>;
type CreateRfq = Extract<UnstampedRfqCommand, { type: 'rfq_create' }>;

export class RfqHarness {
  readonly engine = new Harness();
  readonly desk: RfqDesk;
  readonly deskEvents: RfqEvent[] = [];
  readonly engineEvents: CoreEvent[] = [];

  constructor() {
    this.desk = new RfqDesk(marketOf(this.engine.venue));
    const h = this.engine;
    h.list(perpetualSpec());
    h.list(optionSpec(ONE_LOT_BLOCK));
    h.list(optionSpec({ name: CALL_75, strike: '75000', ...ONE_LOT_BLOCK }));
    h.list(optionSpec({ name: PUT_70, optionType: 'put', ...ONE_LOT_BLOCK }));
    for (const account of [TAKER, MAKER_A, MAKER_B, MAKER_C, TAKER_2]) h.account(account);
  }

  get venue(): Venue {
    return this.engine.venue;
  }

  get now(): number {
    return this.engine.ts;
  }

  private stamp(): CommandStamp {
    return { seq: ++this.engine.seq, ts: this.engine.ts };
  }

  /** Runs one desk command the way the composite core does. */
  run(command: UnstampedRfqCommand): DeskResult {
    const stamp = this.stamp();
    this.deskEvents.push(...this.desk.advance(stamp, this.venue));
    const recording = this.recordingEngine();
    const result = this.desk.execute({ ...command, ...stamp } as RfqCommand, recording.port);
    this.deskEvents.push(...result.events);
    this.deskEvents.push(...this.desk.react(recording.events, stamp, this.venue));
    return result;
  }

  ok(command: UnstampedRfqCommand): RfqValue {
    const result = this.run(command);
    if (!result.ok) assert.fail(`expected success, got ${result.error.name}: ${result.error.message}`);
    return result.value;
  }

  refused(command: UnstampedRfqCommand, name: string): void {
    const result = this.run(command);
    assert.equal(result.ok, false, `expected ${name}, got success`);
    if (!result.ok) assert.equal(result.error.name, name, result.error.message);
  }

  /** Runs an engine command (with desk advance and react). */
  core(command: UnstampedCommand): ReturnType<Venue['execute']> {
    const stamp = this.stamp();
    this.deskEvents.push(...this.desk.advance(stamp, this.venue));
    const result = this.venue.execute({ ...command, ...stamp } as Parameters<Venue['execute']>[0]);
    this.engineEvents.push(...result.events);
    this.deskEvents.push(...this.desk.react(result.events, stamp, this.venue));
    return result;
  }

  /** Moves virtual time and delivers the timer. */
  /** The BTC index at 60,000 and the spread's calls marked at `p70` and `p75` ticks. */
  markSpread(p70: number, p75: number): void {
    this.core({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: CALL_70, markPrice: p70 },
        { instrumentName: CALL_75, markPrice: p75 },
      ],
    });
  }

  at(ts: number): void {
    this.engine.ts = ts;
    this.core({ type: 'timer' });
  }

  private recordingEngine() {
    const events: CoreEvent[] = [];
    const venue = this.venue;
    const sink = this.engineEvents;
    return {
      events,
      port: {
        execute(command: Parameters<Venue['execute']>[0]) {
          const result = venue.execute(command);
          events.push(...result.events);
          sink.push(...result.events);
          return result;
        },
      },
    };
  }

  size(accountId: number, instrumentName: string): number {
    return this.venue.position(accountId, instrumentName)?.size ?? 0;
  }

  /** An rfq_create of the taker to desk A for 1 BTC of 70000-C, with `more` on top. */
  createCommand(more: Partial<CreateRfq> = {}): CreateRfq {
    return {
      type: 'rfq_create',
      accountId: TAKER,
      userId: TAKER,
      takerAlias: null,
      makers: [],
      targetDesks: [DESK_A],
      disclosed: true,
      label: '',
      legs: [{ instrumentName: CALL_70, side: 'buy', amount: 10 }],
      hedge: null,
      tradeAllocations: [],
      ...more,
    };
  }

  /** A call spread: buy 1 BTC of 70000-C, sell 1 BTC of 75000-C (10 RFQ lots of 0.1). */
  callSpread(more: Partial<CreateRfq> = {}) {
    const value = this.ok(
      this.createCommand({
        takerAlias: 'taker-desk',
        targetDesks: [DESK_A, DESK_B],
        label: 'cs',
        legs: [
          { instrumentName: CALL_70, side: 'buy', amount: 10 },
          { instrumentName: CALL_75, side: 'sell', amount: 10 },
        ],
        ...more,
      }),
    );
    assert.equal(value.kind, 'rfq');
    if (value.kind !== 'rfq') throw new Error('unreachable');
    return value.rfq;
  }

  makerId(rfq: { makerRecords: readonly { desk: string; blockRfqId: string }[] }, desk: string): string {
    const record = rfq.makerRecords.find((r) => r.desk === desk);
    assert.ok(record, `no maker record for ${desk}`);
    return record.blockRfqId;
  }

  /** A valid create_quote for desk A selling the whole spread at 0.05/0.03 (price 200). */
  quoteCommand(rfq: { makerRecords: readonly { desk: string; blockRfqId: string }[] }) {
    return {
      type: 'rfq_quote_create' as const,
      accountId: MAKER_A,
      userId: MAKER_A,
      desk: DESK_A,
      blockRfqId: this.makerId(rfq, DESK_A),
      side: 'sell' as const,
      quantity: 10,
      price: null as number | null,
      legs: spreadLegs(500, 300),
      hedge: null as QuoteHedgeInput | null,
      executionInstruction: 'any_part_of' as const,
      expiresAt: null,
      label: '',
    };
  }

  /** Quote on the call spread with leg prices in ticks (strategy price = p70 − p75); the maker's user is its account. */
  quote(
    rfq: { makerRecords: readonly { desk: string; blockRfqId: string }[] },
    desk: string,
    accountId: number,
    side: 'buy' | 'sell',
    quantity: number,
    p70: number,
    p75: number,
    more: Partial<Extract<UnstampedRfqCommand, { type: 'rfq_quote_create' }>> = {},
  ): DeskResult {
    return this.run({
      type: 'rfq_quote_create',
      accountId,
      userId: accountId,
      desk,
      blockRfqId: this.makerId(rfq, desk),
      side,
      quantity,
      price: null,
      legs: spreadLegs(p70, p75),
      hedge: null,
      executionInstruction: 'any_part_of',
      expiresAt: null,
      label: '',
      ...more,
    });
  }
}

export function spreadLegs(p70: number, p75: number): QuoteLegInput[] {
  return [
    { instrumentName: CALL_70, side: 'buy', ratio: 1, price: p70 },
    { instrumentName: CALL_75, side: 'sell', ratio: 1, price: p75 },
  ];
}

export function quoteIdOf(result: DeskResult): string {
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  assert.equal(result.value.kind, 'quote');
  if (result.value.kind !== 'quote') throw new Error('unreachable');
  return result.value.quote.quoteId;
}

/** A call-spread RFQ of TAKER (with `more`), past its grace period: open for accepts. */
export function openRfq(h: RfqHarness, more: Parameters<RfqHarness['callSpread']>[0] = {}): RfqRecord {
  const rfq = h.callSpread(more);
  h.at(h.now + 5_000);
  return rfq;
}

/** TAKER accepts `rfq` on `side` at `price` (fill-or-kill unless `more` says otherwise). */
export function accept(h: RfqHarness, rfq: RfqRecord, side: 'buy' | 'sell', price: number, more = {}) {
  return h.run({
    type: 'rfq_accept',
    accountId: TAKER,
    blockRfqId: rfq.blockRfqId,
    side,
    price,
    quantity: null,
    timeInForce: 'fill_or_kill',
    ...more,
  });
}
