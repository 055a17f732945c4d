/**
 * Drives the real core machine (engine + RFQ desk + portfolio algorithms, built by
 * `createCoreMachine`) with stamped commands on a virtual clock and records, per command, the
 * `CommittedEvents` the service hands the read store ({seq, ts, events, subEvents}).
 * Not production code.
 */
import assert from 'node:assert/strict';
import type { PortfolioSpec, UnstampedAlgoCommand } from '../../src/algo/types.ts';
import { createCoreMachine } from '../../src/app/core-factory.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import type { MachineCommand, MachineResult } from '../../src/core/machine.ts';
import { optionSpec, orderCommand, perpetualSpec, T0 } from '../../src/engine/testkit.ts';
import type { RfqRecord, RfqTradeRecord, RfqValue, UnstampedRfqCommand } from '../../src/rfq/types.ts';
import type { CommittedEvents } from '../../src/store/read/projection.ts';

export { T0 };
export const PERP = 'BTC-PERPETUAL';
export const CALL_70 = 'BTC-27DEC26-70000-C';
export const CALL_75 = 'BTC-27DEC26-75000-C';
/** 60,000 USD in the perpetual's 0.5 ticks. */
export const PERP_60K = 120_000;

export const TAKER = 1;
export const MAKER = 2;
export const TRADER = 3;
export const MIRROR = 4;
export const DESK = 'desk-a';

type Unstamped = UnstampedCommand | UnstampedRfqCommand | UnstampedAlgoCommand;

export class CoreDriver {
  readonly machine = createCoreMachine();
  readonly committed: CommittedEvents[] = [];
  seq = 0;
  ts = T0;

  /** Lists a perpetual and two calls, funds every account, sets index and marks. */
  static withMarket(): CoreDriver {
    const d = new CoreDriver();
    d.run({ type: 'list_instrument', spec: perpetualSpec() });
    d.run({ type: 'list_instrument', spec: optionSpec() });
    d.run({ type: 'list_instrument', spec: optionSpec({ name: CALL_75, strike: '75000' }) });
    for (const accountId of [TAKER, MAKER, TRADER, MIRROR]) {
      d.run({ type: 'create_account', accountId });
      d.run({ type: 'deposit', accountId, currency: 'BTC', amount: 100_000_000_000 });
    }
    d.run({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: PERP, markPrice: PERP_60K },
        { instrumentName: CALL_70, markPrice: 500 },
        { instrumentName: CALL_75, markPrice: 300 },
      ],
    });
    return d;
  }

  run(command: Unstamped): MachineResult {
    const seq = ++this.seq;
    const result = this.machine.execute({ ...command, seq, ts: this.ts } as MachineCommand);
    this.committed.push({ seq, ts: this.ts, events: result.engineEvents, subEvents: result.subEvents });
    return result;
  }

  /** Runs a sub-machine command and returns its value; fails the test on a refusal. */
  ok<V>(command: Unstamped): V {
    const { result } = this.run(command);
    assert.ok('ok' in result && result.ok, `refused: ${JSON.stringify(result)}`);
    return (result as { value: V }).value;
  }

  /** Moves the virtual clock and delivers a timer command. */
  at(ts: number): void {
    this.ts = ts;
    this.run({ type: 'timer' });
  }

  // -------------------------------------------------------------------------------------------
  // Block RFQ

  /** A call spread RFQ (buy 70000-C, sell 75000-C, 25 BTC each: the block minimum) sent to DESK. */
  createRfq(label = 'cs'): RfqRecord {
    const value = this.ok<RfqValue>({
      type: 'rfq_create',
      accountId: TAKER,
      userId: TAKER,
      takerAlias: 'taker-desk',
      makers: [],
      targetDesks: [DESK],
      disclosed: true,
      label,
      legs: [
        { instrumentName: CALL_70, side: 'buy', amount: 250 },
        { instrumentName: CALL_75, side: 'sell', amount: 250 },
      ],
      hedge: null,
      tradeAllocations: [],
    });
    assert.equal(value.kind, 'rfq');
    return (value as Extract<RfqValue, { kind: 'rfq' }>).rfq;
  }

  /** DESK offers the whole spread at 500/300 ticks (strategy price 200). */
  quote(rfq: RfqRecord): string {
    const value = this.ok<RfqValue>({
      type: 'rfq_quote_create',
      accountId: MAKER,
      userId: MAKER,
      desk: DESK,
      blockRfqId: rfq.makerRecords.find((r) => r.desk === DESK)!.blockRfqId,
      side: 'sell',
      quantity: 250,
      price: null,
      legs: [
        { instrumentName: CALL_70, side: 'buy', ratio: 1, price: 500 },
        { instrumentName: CALL_75, side: 'sell', ratio: 1, price: 300 },
      ],
      hedge: null,
      executionInstruction: 'any_part_of',
      expiresAt: null,
      label: 'q',
    });
    assert.equal(value.kind, 'quote');
    return (value as Extract<RfqValue, { kind: 'quote' }>).quote.quoteId;
  }

  accept(rfq: RfqRecord): RfqTradeRecord {
    const value = this.ok<RfqValue>({
      type: 'rfq_accept',
      accountId: TAKER,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 210,
      quantity: null,
      timeInForce: 'fill_or_kill',
    });
    assert.ok(value.kind === 'accept' && value.trade !== null);
    return value.trade;
  }

  /** `n` RFQs created, quoted and accepted at the current time (the trades share a timestamp). */
  tradeRfqs(n: number): RfqTradeRecord[] {
    const rfqs = Array.from({ length: n }, (_, i) => this.createRfq(`cs${i}`));
    this.at(this.ts + 5_000);
    for (const rfq of rfqs) this.quote(rfq);
    return rfqs.map((rfq) => this.accept(rfq));
  }

  // -------------------------------------------------------------------------------------------
  // Portfolios

  submit(portfolio: PortfolioSpec): number {
    const value = this.ok<{ kind: string; portfolioId: number }>({ type: 'submit_portfolio', portfolio });
    return value.portfolioId;
  }

  makerOrder(side: 'buy' | 'sell', amount: number, price: number, instrumentName = PERP): void {
    const { result } = this.run(orderCommand(MAKER, side, amount, price, { instrumentName, label: 'maker' }));
    assert.ok('ok' in result && result.ok);
  }
}
