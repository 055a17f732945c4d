/**
 * Wire objects (results and pushes) as TypeBox schemas: spec 2.6 Order, 2.7 Trade, and the
 * position, account summary, order book, ticker and instrument objects. They document the
 * results (OpenAPI/AsyncAPI) and type the sdk; the mapping in `../wire/` produces them.
 * Decimals are strings; times are ms since epoch.
 */
import { type Static, Type } from '@sinclair/typebox';
import { RfqAllocationSchema } from './rfq.ts';

const S = Type.String();
const B = Type.Boolean();
const I = Type.Integer();
const Os = Type.Optional(S);
const Ob = Type.Optional(B);

export const OrderSchema = Type.Object(
  {
    orderId: S,
    instrumentName: S,
    side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
    orderType: S,
    originalOrderType: Os,
    orderState: Type.Union(
      ['open', 'filled', 'rejected', 'cancelled', 'untriggered'].map((v) => Type.Literal(v)),
    ),
    price: Type.String({ description: 'decimal, or market_price for open trigger market orders' }),
    quantity: S,
    contracts: Os,
    filledQuantity: S,
    averagePrice: S,
    timeInforce: S,
    timeInForce: Type.Optional(
      Type.String({ description: 'same as timeInforce (the spelling of the examples)' }),
    ),
    createdAt: I,
    lastUpdatedAt: I,
    cancelReason: Os,
    label: S,
    api: B,
    web: Ob,
    mobile: Ob,
    postOnly: B,
    rejectPostOnly: Ob,
    reduceOnly: Ob,
    replaced: B,
    autoReplaced: Ob,
    mmp: B,
    mmpCancelled: Ob,
    advanced: Os,
    usd: Os,
    implv: Os,
    displayAmount: Os,
    refreshAmount: Os,
    trigger: Os,
    triggerPrice: Os,
    triggerOffset: Os,
    triggerReferencePrice: Os,
    triggered: Ob,
    triggerOrderId: Os,
    triggerFillCondition: Os,
    otoOrderIds: Type.Optional(Type.Array(S)),
    primaryOrderId: Os,
    isSecondaryOto: Ob,
    isPrimaryOtoco: Ob,
    ocoRef: Os,
    blockTrade: Ob,
    isLiquidation: Ob,
    riskReducing: B,
  },
  { $id: 'Order' },
);
export type WireOrder = Static<typeof OrderSchema>;

/**
 * A trade's index and mark as they were when it traded, never filled in later: null when none had
 * been published yet (spec 2.7 says `string`; see docs/decisions.md). A substitute such as the
 * trade's own price would report a trade as exactly at the mark.
 */
const TradeIndexPrice = () =>
  Type.Union([S, Type.Null()], {
    description:
      "the index of the instrument's currency at trade time; null when no index had been published yet",
  });
const TradeMarkPrice = () =>
  Type.Union([S, Type.Null()], {
    description:
      'the mark at trade time; null when the instrument had none yet (a combo listed on first use has no mark until the next market tick)',
  });

/** The fields of a trade (spec 2.7), shared by a trade and the leg trades of a combo trade. */
const TRADE_FIELDS = {
  tradeId: S,
  tradeSeq: I,
  tickDirection: I,
  timestamp: I,
  instrumentName: S,
  orderId: S,
  orderType: Type.Union([Type.Literal('limit'), Type.Literal('market'), Type.Literal('liquidation')]),
  state: S,
  side: S,
  price: S,
  quantity: S,
  contracts: Os,
  liquidity: Type.Union([Type.Literal('M'), Type.Literal('T')]),
  fee: S,
  feeCurrency: S,
  indexPrice: TradeIndexPrice(),
  markPrice: TradeMarkPrice(),
  underlyingPrice: Os,
  iv: Os,
  profitLoss: S,
  label: Os,
  api: B,
  postOnly: B,
  mmp: B,
  reduceOnly: B,
  riskReducing: B,
  advanced: Os,
  blockTradeId: Os,
  blockRfqId: Os,
  blockRfqQuoteId: Os,
  matchingId: Type.Null(),
  comboId: Type.Optional(Type.String({ description: 'a leg trade: the combo instrument name' })),
  comboTradeId: Type.Optional(Type.String({ description: 'a leg trade: the tradeId of its combo trade' })),
};

/** A leg trade of a combo trade: a trade on the leg instrument, in the leg's units. */
export const LegTradeSchema = Type.Object(TRADE_FIELDS, { $id: 'LegTrade' });

export const TradeSchema = Type.Object(
  {
    ...TRADE_FIELDS,
    legs: Type.Optional(
      Type.Array(LegTradeSchema, {
        description:
          'a trade on a combo book: its leg trades, which carry the positions, fees and profit/loss',
      }),
    ),
    tradeAllocations: Type.Optional(
      Type.Array(RfqAllocationSchema, {
        description:
          "the taker's trade from a Block RFQ with allocations: the RFQ's allocation list (never on the maker's trades)",
      }),
    ),
  },
  { $id: 'Trade' },
);
export type WireTrade = Static<typeof TradeSchema>;
export type WireLegTrade = Static<typeof LegTradeSchema>;

/** A trade as the public tape shows it (Deribit's public trades): no order, account or fee. */
export const PublicTradeSchema = Type.Object(
  {
    tradeId: S,
    tradeSeq: Type.Integer(),
    timestamp: Type.Integer(),
    tickDirection: Type.Integer({ minimum: 0, maximum: 3 }),
    instrumentName: S,
    direction: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: "the taker's side" }),
    price: S,
    quantity: S,
    contracts: S,
    indexPrice: TradeIndexPrice(),
    markPrice: TradeMarkPrice(),
    underlyingPrice: Type.Optional(S),
    iv: Type.Optional(S),
    blockTradeId: Type.Optional(S),
    comboId: Type.Optional(S),
    comboTradeId: Type.Optional(S),
  },
  { $id: 'PublicTrade' },
);
export type WirePublicTrade = Static<typeof PublicTradeSchema>;

export const OrderWithTradesSchema = Type.Object({ order: OrderSchema, trades: Type.Array(TradeSchema) });

/** One group of a detailed cancel_all* answer (Deribit's execution report, camelCase). */
export const CancelReportSchema = Type.Object({
  currency: S,
  type: Type.Union([Type.Literal('limit'), Type.Literal('trigger')]),
  instrumentName: S,
  result: Type.Array(OrderSchema),
});
export type CancelReport = Static<typeof CancelReportSchema>;

export const PositionSchema = Type.Object(
  {
    instrumentName: S,
    kind: S,
    direction: Type.Union([Type.Literal('buy'), Type.Literal('sell'), Type.Literal('zero')]),
    size: Type.String({ description: 'signed quantity: positive long, negative short' }),
    averagePrice: S,
    realizedProfitLoss: S,
    markPrice: Type.Union([S, Type.Null()], { description: 'null before the first mark' }),
    floatingProfitLoss: Type.Union([S, Type.Null()], {
      description: 'PnL of the open size at the mark, in the settlement currency (as equity counts it)',
    }),
    totalProfitLoss: Type.Union([S, Type.Null()], { description: 'realizedProfitLoss + floatingProfitLoss' }),
    settlementCurrency: S,
  },
  { $id: 'Position' },
);

/**
 * One entry of the settlement history (Deribit's private/get_settlement_history_by_*): a position
 * an expiry closed, with the cash it booked. Deribit's session, funding and bankruptcy fields are
 * left out: the venue computes none of them (docs/decisions.md, "Settlement history").
 */
export const SettlementSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('settlement'), Type.Literal('delivery'), Type.Literal('bankruptcy')], {
      description: 'always delivery: a position closed at its expiry',
    }),
    timestamp: Type.Integer({ description: 'when it settled (ms)' }),
    instrumentName: S,
    position: Type.String({
      description: 'the signed quantity held when it settled: positive long, negative short',
    }),
    markPrice: Type.String({ description: "the settlement price, on the instrument's tick grid" }),
    indexPrice: Type.Union([S, Type.Null()], {
      description:
        'the settlement index (the 30-minute average, USD per coin) the position was closed against exactly; null when it settled at markPrice alone',
    }),
    profitLoss: Type.String({
      description:
        'realised profit/loss of the settlement: exit value less the cost of the position, in currency',
    }),
    cashflow: Type.String({
      description:
        "what the settlement added to the balance (negative: took), in currency: a future's profitLoss, an option's payoff (long receives, short pays)",
    }),
    currency: Type.String({ description: 'the settlement currency: the balance the cash went to' }),
  },
  { $id: 'Settlement' },
);
export type WireSettlement = Static<typeof SettlementSchema>;

export const SettlementPageSchema = Type.Object({
  settlements: Type.Array(SettlementSchema),
  continuation: Type.Union([S, Type.Null()], {
    description: "the next page's token; null when nothing follows",
  }),
});

/**
 * One entry of the transaction log (Deribit's private/get_transaction_log): a change of the
 * balance, its cause, and the balance after it. Walked oldest first, each `balance` is the one
 * before plus `change`, exactly (docs/decisions.md, "Transaction log").
 */
export const TransactionSchema = Type.Object(
  {
    id: Type.String({ description: "the entry's place in the log, `<seq>:<n>`; the log is ordered by it" }),
    timestamp: I,
    type: Type.Union(
      [Type.Literal('trade'), Type.Literal('deposit'), Type.Literal('withdrawal'), Type.Literal('delivery')],
      {
        description:
          "what changed the balance: a trade's side, a deposit, a withdrawal, an expiry's settlement",
      },
    ),
    currency: Type.String({ description: "the balance's currency" }),
    change: Type.String({ description: 'the signed change of the balance: cashflow less commission' }),
    balance: Type.String({ description: 'the balance right after the change' }),
    cashflow: Type.String({
      description:
        "the cash the cause moved before fees: a trade's option premium, futures realised PnL or spot amount; a delivery's payoff or PnL; the amount deposited or withdrawn",
    }),
    commission: Type.String({ description: 'the fee this change paid (negative: a rebate); 0 without one' }),
    instrumentName: Os,
    tradeId: Os,
    orderId: Os,
    side: Type.Optional(Type.Union([Type.Literal('buy'), Type.Literal('sell')])),
    liquidity: Type.Optional(Type.Union([Type.Literal('M'), Type.Literal('T')])),
    price: Type.Optional(
      Type.String({ description: "a trade's price; a delivery's settlement price, on the tick grid" }),
    ),
    amount: Type.Optional(Type.String({ description: "a trade's quantity" })),
    position: Type.Optional(
      Type.String({ description: 'a delivery: the signed quantity held when it settled' }),
    ),
    indexPrice: Type.Optional(
      Type.Union([S, Type.Null()], {
        description: 'a delivery: the settlement index it was closed against; null when at the price alone',
      }),
    ),
    profitLoss: Type.Optional(Type.String({ description: 'a delivery: its realised profit/loss' })),
    blockTradeId: Os,
    comboId: Type.Optional(Type.String({ description: "a combo's leg trade: the combo" })),
    depositId: Os,
  },
  { $id: 'Transaction' },
);
export type WireTransaction = Static<typeof TransactionSchema>;

export const TransactionLogSchema = Type.Object({
  logs: Type.Array(TransactionSchema),
  continuation: Type.Union([S, Type.Null()], {
    description: "the next page's token; null when nothing follows",
  }),
});

export const MarginsSchema = Type.Object(
  {
    buy: Type.String({
      description: 'what a buy order would reserve now: margin, worst-case taker fee and losses',
    }),
    buyCurrency: Type.String({
      description: 'the currency a buy draws on (the settlement currency; spot: the quote)',
    }),
    sell: Type.String({ description: 'what a sell order would reserve now' }),
    sellCurrency: Type.String({
      description: 'the currency a sell draws on (the settlement currency; spot: the base)',
    }),
    minPrice: Type.Union([S, Type.Null()], {
      description: "the band's low edge: no sell below it; null before a mark",
    }),
    maxPrice: Type.Union([S, Type.Null()], {
      description: "the band's high edge: no buy above it; null before a mark",
    }),
  },
  { $id: 'Margins' },
);

export const AccountSummarySchema = Type.Object(
  {
    accountId: I,
    currency: S,
    balance: S,
    equity: S,
    marginBalance: Type.String({
      description: "equity less long options' value, except what offsets the liability of shorts they cover",
    }),
    availableFunds: Type.String({ description: 'marginBalance − initialMargin' }),
    initialMargin: S,
    maintenanceMargin: S,
    futuresPl: Type.String({
      description: 'floating PnL at the marks of the futures and perpetuals settled in the currency',
    }),
    optionsPl: Type.String({
      description: 'floating PnL at the marks of the options settled in the currency',
    }),
    optionsValue: Type.String({
      description:
        "the options' value at their marks, longs positive, shorts negative: equity = balance + futuresPl + optionsValue",
    }),
    totalPl: Type.String({ description: 'futuresPl + optionsPl' }),
    selfTradingRejectMode: Type.Union([Type.Literal('reject_taker'), Type.Literal('cancel_maker')], {
      description:
        "the account's self-trade prevention mode (private/set_self_trading_config); cancel_maker, every account's default, until set",
    }),
    selfTradingExtendedToSubaccounts: Type.Boolean({
      description:
        'always false: self-trade prevention is per account, so orders of two accounts of one user trade with each other',
    }),
  },
  { $id: 'AccountSummary' },
);

const Level = Type.Tuple([S, S], { description: '[price, quantity]' });
const NullableDecimal = Type.Union([S, Type.Null()]);
const BandEdge = (edge: 'lowest' | 'highest') =>
  Type.Union([S, Type.Null()], {
    description: `the ${edge} price a new order may have now (the price band around the mark); null before the first mark`,
  });

export const OrderBookSchema = Type.Object(
  {
    instrumentName: S,
    timestamp: I,
    bids: Type.Array(Level),
    asks: Type.Array(Level),
    bestBidPrice: NullableDecimal,
    bestAskPrice: NullableDecimal,
    minPrice: BandEdge('lowest'),
    maxPrice: BandEdge('highest'),
  },
  { $id: 'OrderBook' },
);

export const TickerSchema = Type.Object(
  {
    instrumentName: S,
    timestamp: I,
    state: S,
    bestBidPrice: NullableDecimal,
    bestBidAmount: S,
    bestAskPrice: NullableDecimal,
    bestAskAmount: S,
    lastPrice: NullableDecimal,
    markPrice: NullableDecimal,
    indexPrice: NullableDecimal,
    minPrice: BandEdge('lowest'),
    maxPrice: BandEdge('highest'),
    markIv: Type.Optional(NullableDecimal),
    bidIv: Type.Optional(NullableDecimal),
    askIv: Type.Optional(NullableDecimal),
    underlyingPrice: Type.Optional(NullableDecimal),
    greeks: Type.Optional(
      Type.Object(
        { delta: S, gamma: S, vega: S, theta: S, rho: S },
        {
          additionalProperties: false,
          description: 'options only: USD per vol point (vega), per day (theta)',
        },
      ),
    ),
    openInterest: Type.Optional(
      Type.String({
        description:
          'sum of the open long positions, in amount units (USD for inverse futures); not for spot',
      }),
    ),
    stats: Type.Optional(
      Type.Object(
        { volume: S, high: NullableDecimal, low: NullableDecimal },
        {
          additionalProperties: false,
          description:
            'trades of the last 24 h (whole minutes): amount traded, highest and lowest price (null without a trade)',
        },
      ),
    ),
  },
  { $id: 'Ticker' },
);

export const BookSummarySchema = Type.Object(
  {
    instrumentName: S,
    baseCurrency: S,
    quoteCurrency: S,
    creationTimestamp: Type.Integer({ description: 'when this summary was read, ms' }),
    bidPrice: NullableDecimal,
    askPrice: NullableDecimal,
    midPrice: Type.Union([S, Type.Null()], {
      description: 'halfway between the best bid and ask, exactly (may be half a tick); null without both',
    }),
    markPrice: NullableDecimal,
    last: Type.Union([S, Type.Null()], { description: 'the last trade price; null before the first trade' }),
    estimatedDeliveryPrice: Type.Union([S, Type.Null()], {
      description:
        "the price the instrument's currency pair is expected to settle at now: the index, or inside the last 30 minutes before the instrument's expiry the part of its settlement average already fixed weighted with the index for the rest",
    }),
    markIv: Type.Optional(NullableDecimal),
    underlyingPrice: Type.Optional(NullableDecimal),
    openInterest: Type.Optional(
      Type.String({ description: 'sum of the open long positions, in amount units; not for spot' }),
    ),
    volume: Type.Optional(Type.String({ description: 'amount traded in the last 24 h' })),
    high: Type.Optional(NullableDecimal),
    low: Type.Optional(NullableDecimal),
  },
  {
    $id: 'BookSummary',
    description: 'one line per instrument of public/get_book_summary_by_currency',
  },
);

export const InstrumentSchema = Type.Object(
  {
    instrumentName: S,
    kind: S,
    baseCurrency: S,
    quoteCurrency: S,
    counterCurrency: S,
    settlementCurrency: S,
    marginKind: Type.Union([Type.Literal('linear'), Type.Literal('reversed')], {
      description: 'reversed: inverse (margined and settled in the coin); linear: in the quote currency',
    }),
    settlementPeriod: Type.Union([S, Type.Null()]),
    optionType: Type.Union([S, Type.Null()]),
    strike: Type.Union([S, Type.Null()]),
    expiration: Type.Union([I, Type.Null()]),
    tickSize: S,
    tickSizeSteps: Type.Array(Type.Object({ abovePrice: S, tickSize: S })),
    minTradeAmount: S,
    contractSize: S,
    makerCommission: S,
    takerCommission: S,
    blockTradeMinTradeAmount: S,
    createdAt: I,
    isActive: B,
    legs: Type.Optional(
      Type.Array(
        Type.Object({
          instrumentName: S,
          ratio: Type.Integer({
            description: 'legs traded per combo unit; negative: the opposite direction',
          }),
        }),
        { description: "a combo's legs (absent on other instruments)" },
      ),
    ),
  },
  { $id: 'Instrument' },
);

export const ComboSchema = Type.Object(
  {
    id: S,
    state: Type.Union([Type.Literal('active'), Type.Literal('inactive')], {
      description: 'active: listed and trading; inactive: expired (the earliest leg has expired)',
    }),
    stateTimestamp: I,
    creationTimestamp: I,
    legs: Type.Array(
      Type.Object({
        instrumentName: S,
        amount: Type.Integer({
          description: 'legs traded per combo unit; negative: the opposite direction of the combo trade',
        }),
      }),
    ),
  },
  { $id: 'Combo', description: "a combo's details, as Deribit's combo books give them" },
);
