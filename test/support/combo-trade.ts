/**
 * A hand-built trade on a combo's book with its leg trades, as the engine emits it (one `trade`
 * event, the legs nested): a call spread BTC-CS-27DEC26-70000_75000, +1 70000-C and −1 75000-C.
 * The legs carry the fees; the combo trade's parties carry their sums.
 */
import type { TradeParty, TradeView } from '../../src/core/events.ts';
import type { Side } from '../../src/core/types.ts';
import { Instrument, type InstrumentSpec } from '../../src/domain/instrument.ts';
import { optionSpec, tradeParty } from '../../src/engine/testkit.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';

export const COMBO = 'BTC-CS-27DEC26-70000_75000';
export const LONG_LEG = 'BTC-27DEC26-70000-C';
export const SHORT_LEG = 'BTC-27DEC26-75000-C';

/** The two legs and the combo as instruments (ids 1, 2, 3). */
export function comboInstruments(): Map<string, Instrument> {
  const long = optionSpec({ name: LONG_LEG, strike: '70000' });
  const short = optionSpec({ name: SHORT_LEG, strike: '75000' });
  const specs = new Map<string, InstrumentSpec>([
    [LONG_LEG, long],
    [SHORT_LEG, short],
  ]);
  const combo = createCombo(parseComboName(COMBO)!, (name) => specs.get(name), 0);
  if (!combo.ok) throw new Error(combo.message);
  return new Map([
    [LONG_LEG, new Instrument(1, long)],
    [SHORT_LEG, new Instrument(2, short)],
    [COMBO, new Instrument(3, combo.spec)],
  ]);
}

const flip = (side: Side): Side => (side === 'buy' ? 'sell' : 'buy');

function party(
  accountId: number,
  orderId: string,
  side: Side,
  liquidity: 'M' | 'T',
  fee: number,
): TradeParty {
  return tradeParty({
    accountId,
    orderId,
    side,
    liquidity,
    fee,
    profitLoss: liquidity === 'T' ? -7 : 7,
    label: liquidity === 'T' ? 'spread' : '',
  });
}

export interface ComboTradeOptions {
  /** The combo trade's id; its legs get `<id>-L1` and `<id>-L2`. */
  readonly tradeId?: string;
  readonly timestamp?: number;
  readonly taker?: number;
  readonly maker?: number;
  /** The taker's side on the combo (default buy). */
  readonly takerSide?: Side;
  /** The index at trade time (default 65000; null: none published). */
  readonly indexPrice?: number | null;
}

/**
 * A trade of 1 BTC (10 lots) of the spread at 0.005 (50 ticks): the 70000-C at 0.03 and the
 * 75000-C at 0.025. Leg fees 3 and 2 minor units, profit/loss −7/+7 per leg and party.
 */
export function comboTradeView(options: ComboTradeOptions = {}): TradeView {
  const tradeId = options.tradeId ?? 'BTC-10';
  const timestamp = options.timestamp ?? Date.UTC(2026, 10, 25, 8);
  const takerAccount = options.taker ?? 1;
  const makerAccount = options.maker ?? 2;
  const takerSide = options.takerSide ?? 'buy';
  const indexPrice = options.indexPrice === undefined ? 65_000 : options.indexPrice;
  const common = {
    currency: 'BTC',
    timestamp,
    amount: 10,
    tickDirection: 0 as const,
    indexPrice,
    blockTradeId: null,
    blockRfqId: null,
    makerBlockRfqId: null,
    blockRfqQuoteId: null,
  };
  const leg = (n: number, instrumentName: string, price: number, ratio: 1 | -1, fee: number): TradeView => {
    const side = ratio === 1 ? takerSide : flip(takerSide);
    return {
      ...common,
      tradeId: `${tradeId}-L${n}`,
      tradeSeq: 100 + n,
      instrumentName,
      price,
      markPrice: price,
      taker: party(takerAccount, `T${tradeId}`, side, 'T', fee),
      maker: party(makerAccount, `M${tradeId}`, flip(side), 'M', fee),
      comboId: COMBO,
      comboTradeId: tradeId,
    };
  };
  const legs = [leg(1, LONG_LEG, 300, 1, 3), leg(2, SHORT_LEG, 250, -1, 2)];
  return {
    ...common,
    tradeId,
    tradeSeq: 7,
    instrumentName: COMBO,
    price: 50,
    markPrice: 50,
    taker: { ...party(takerAccount, `T${tradeId}`, takerSide, 'T', 5), profitLoss: -14 },
    maker: { ...party(makerAccount, `M${tradeId}`, flip(takerSide), 'M', 5), profitLoss: 14 },
    legs,
  };
}
