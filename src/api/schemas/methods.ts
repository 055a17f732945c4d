/**
 * Params schemas of the gateway's own envelope methods (spec 4.2–4.5 plus the usable-API
 * additions of SEMANTICS.md, Orders). Unknown fields are refused; optional params may be null.
 */
import { type Static, Type } from '@sinclair/typebox';
import { CANCEL_ORDER_TYPES, OPEN_ORDER_TYPES } from '../../core/order-type-filter.ts';
import { DecimalString, Opt, PLAIN_TEXT, Strict, StringEnum } from '../validation.ts';

export const ORDER_TYPES = [
  'limit',
  'stop_limit',
  'take_limit',
  'market',
  'stop_market',
  'take_market',
  'market_limit',
  'trailing_stop',
] as const;
export const TIME_IN_FORCE = [
  'good_til_cancelled',
  'good_til_day',
  'fill_or_kill',
  'immediate_or_cancel',
] as const;
export const KINDS = ['future', 'option', 'spot', 'future_combo', 'option_combo', 'combo', 'any'] as const;

const InstrumentName = Type.String({ minLength: 1, maxLength: 64, pattern: PLAIN_TEXT });
const Currency = Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9]+$' });
const Label = Type.String({ maxLength: 64, pattern: PLAIN_TEXT });
/** A label that selects orders: never '', the label of every order placed without one. */
const SelectingLabel = Type.String({ minLength: 1, maxLength: 64, pattern: PLAIN_TEXT });
const OrderId = Type.String({ minLength: 1, maxLength: 64, pattern: PLAIN_TEXT });
const HistoryToken = Type.String({ maxLength: 128, pattern: PLAIN_TEXT });
const Timestamp = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 });
const Trigger = StringEnum(['index_price', 'mark_price', 'last_price']);

const OtocoEntry = Type.Object(
  {
    side: StringEnum(['buy', 'sell']),
    quantity: Opt(DecimalString()),
    type: Opt(StringEnum(ORDER_TYPES)),
    label: Opt(Label),
    price: Opt(DecimalString()),
    reduceOnly: Opt(Type.Boolean()),
    timeInforce: Opt(StringEnum(TIME_IN_FORCE)),
    timeInForce: Opt(StringEnum(TIME_IN_FORCE)),
    postOnly: Opt(Type.Boolean()),
    rejectPostOnly: Opt(Type.Boolean()),
    triggerPrice: Opt(DecimalString()),
    triggerOffset: Opt(DecimalString()),
    trigger: Opt(Trigger),
  },
  Strict,
);

export const PlaceOrderParams = Type.Object(
  {
    instrumentName: InstrumentName,
    quantity: Opt(DecimalString('requested size (spec 2.6 units)')),
    contracts: Opt(DecimalString('size in contracts; must match quantity when both are given')),
    type: Opt(StringEnum(ORDER_TYPES)),
    label: Opt(Label),
    price: Opt(DecimalString()),
    timeInforce: Opt(StringEnum(TIME_IN_FORCE)),
    timeInForce: Opt(StringEnum(TIME_IN_FORCE)),
    displayAmount: Opt(DecimalString()),
    postOnly: Opt(Type.Boolean()),
    rejectPostOnly: Opt(Type.Boolean()),
    reduceOnly: Opt(Type.Boolean()),
    triggerPrice: Opt(DecimalString()),
    triggerOffset: Opt(DecimalString()),
    trigger: Opt(Trigger),
    advanced: Opt(StringEnum(['usd', 'implv'])),
    mmp: Opt(Type.Boolean()),
    validUntil: Opt(Timestamp),
    linkedOrderType: Opt(
      StringEnum(['one_triggers_other', 'one_cancels_other', 'one_triggers_one_cancels_other']),
    ),
    triggerFillCondition: Opt(StringEnum(['first_hit', 'complete_fill', 'incremental'])),
    otocoConfig: Opt(Type.Array(OtocoEntry, { maxItems: 10 })),
  },
  Strict,
);
export type PlaceOrderParams = Static<typeof PlaceOrderParams>;

/** What an edit may change (`private/edit` names the order by id, `edit_by_label` by label). */
const editFields = {
  quantity: Opt(DecimalString()),
  contracts: Opt(DecimalString()),
  price: Opt(DecimalString()),
  postOnly: Opt(Type.Boolean()),
  rejectPostOnly: Opt(Type.Boolean()),
  reduceOnly: Opt(Type.Boolean()),
  triggerPrice: Opt(DecimalString()),
  triggerOffset: Opt(DecimalString()),
  advanced: Opt(StringEnum(['usd', 'implv'])),
  mmp: Opt(Type.Boolean()),
  validUntil: Opt(Timestamp),
  displayAmount: Opt(Type.Union([DecimalString(), Type.Number({ minimum: 0 })])),
};
export const EditOrderParams = Type.Object({ orderId: OrderId, ...editFields }, Strict);
export type EditOrderParams = Static<typeof EditOrderParams>;
export const EditByLabelParams = Type.Object(
  { label: SelectingLabel, instrumentName: InstrumentName, ...editFields },
  Strict,
);

export const OrderIdParams = Type.Object({ orderId: OrderId }, Strict);
export const EmptyParams = Type.Object({}, Strict);

const Detailed = Opt(
  Type.Boolean({
    description:
      'true: the cancelled orders, by currency, type (limit or trigger) and instrument, instead of a count',
  }),
);
const CancelType = Opt(StringEnum(CANCEL_ORDER_TYPES));
export const CancelAllParams = Type.Object({ detailed: Detailed }, Strict);
export const CancelByInstrumentParams = Type.Object(
  { instrumentName: InstrumentName, type: CancelType, detailed: Detailed },
  Strict,
);
export const CancelByCurrencyParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), type: CancelType, detailed: Detailed },
  Strict,
);

export const CancelByLabelParams = Type.Object(
  { label: SelectingLabel, currency: Opt(Currency), detailed: Detailed },
  Strict,
);
export const OpenOrdersByLabelParams = Type.Object({ currency: Currency, label: SelectingLabel }, Strict);

export const OpenOrdersParams = Type.Object(
  { kind: Opt(StringEnum(KINDS)), type: Opt(StringEnum(OPEN_ORDER_TYPES)) },
  Strict,
);
export const OpenOrdersByCurrencyParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), type: Opt(StringEnum(OPEN_ORDER_TYPES)) },
  Strict,
);
export const OpenOrdersByInstrumentParams = Type.Object(
  { instrumentName: InstrumentName, type: Opt(StringEnum(OPEN_ORDER_TYPES)) },
  Strict,
);

/** The paging and window params both order-history methods take (spec 4.2). */
const ORDER_HISTORY_PAGING = {
  count: Opt(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Opt(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  includeOld: Opt(Type.Boolean()),
  includeUnfilled: Opt(Type.Boolean()),
  withContinuation: Opt(Type.Boolean()),
  continuation: Opt(HistoryToken),
  historical: Opt(Type.Boolean()),
};
export const OrderHistoryParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), ...ORDER_HISTORY_PAGING },
  Strict,
);
export type OrderHistoryParams = Static<typeof OrderHistoryParams>;
export const OrderHistoryByInstrumentParams = Type.Object(
  { instrumentName: InstrumentName, ...ORDER_HISTORY_PAGING },
  Strict,
);

/** The paging and window params both user-trades methods take. */
const USER_TRADES_PAGING = {
  count: Opt(Type.Integer({ minimum: 1, maximum: 1000 })),
  startTimestamp: Opt(Timestamp),
  endTimestamp: Opt(Timestamp),
  sorting: Opt(StringEnum(['asc', 'desc', 'default'])),
  historical: Opt(Type.Boolean()),
  includeOld: Opt(Type.Boolean()),
  continuation: Opt(HistoryToken),
};
export const UserTradesParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), ...USER_TRADES_PAGING },
  Strict,
);
export type UserTradesParams = Static<typeof UserTradesParams>;
export const UserTradesByOrderParams = Type.Object(
  { orderId: OrderId, sorting: Opt(StringEnum(['asc', 'desc', 'default'])) },
  Strict,
);
export const UserTradesByInstrumentParams = Type.Object(
  { instrumentName: InstrumentName, ...USER_TRADES_PAGING },
  Strict,
);
/** Deribit's `*_and_time` variants: the same methods with the time window required. */
const TIME_WINDOW = { ...USER_TRADES_PAGING, startTimestamp: Timestamp, endTimestamp: Timestamp };
export const UserTradesAndTimeParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), ...TIME_WINDOW },
  Strict,
);
export const UserTradesByInstrumentAndTimeParams = Type.Object(
  { instrumentName: InstrumentName, ...TIME_WINDOW },
  Strict,
);

/** The paging and filters both settlement-history methods take (Deribit's). */
const SETTLEMENT_PAGING = {
  type: Opt(
    StringEnum(['settlement', 'delivery', 'bankruptcy'], {
      description:
        'only entries of this type; every entry here is a delivery (an expiry): the venue has no daily settlement and no bankruptcies',
    }),
  ),
  count: Opt(Type.Integer({ minimum: 1, maximum: 1000, description: 'entries per page (default 20)' })),
  continuation: Opt(HistoryToken),
  searchStartTimestamp: Opt(
    Type.Integer({
      minimum: 0,
      maximum: 8_640_000_000_000_000,
      description: 'the latest time to return entries from: only those no newer (ms)',
    }),
  ),
};
export const SettlementHistoryParams = Type.Object({ currency: Currency, ...SETTLEMENT_PAGING }, Strict);
export type SettlementHistoryParams = Static<typeof SettlementHistoryParams>;
export const SettlementHistoryByInstrumentParams = Type.Object(
  { instrumentName: InstrumentName, ...SETTLEMENT_PAGING },
  Strict,
);

export const TransactionLogParams = Type.Object(
  {
    currency: Currency,
    startTimestamp: Type.Integer({
      minimum: 0,
      maximum: 8_640_000_000_000_000,
      description: 'the earliest time of an entry (ms, inclusive)',
    }),
    endTimestamp: Type.Integer({
      minimum: 0,
      maximum: 8_640_000_000_000_000,
      description: 'the latest time of an entry (ms, inclusive)',
    }),
    query: Opt(
      Type.String({
        maxLength: 256,
        pattern: PLAIN_TEXT,
        description:
          'words an entry must all have, separated by spaces or commas: trade, deposit, withdrawal, delivery, buy, sell, maker, taker, block_trade, future, option, spot, future_combo, option_combo',
      }),
    ),
    count: Opt(Type.Integer({ minimum: 1, maximum: 1000, description: 'entries per page (default 100)' })),
    continuation: Opt(HistoryToken),
  },
  Strict,
);
export type TransactionLogParams = Static<typeof TransactionLogParams>;

export const PositionsParams = Type.Object({ currency: Opt(Currency), kind: Opt(StringEnum(KINDS)) }, Strict);
export const AccountSummaryParams = Type.Object({ currency: Currency }, Strict);
export const PositionParams = Type.Object({ instrumentName: InstrumentName }, Strict);
export const MarginsParams = Type.Object(
  {
    instrumentName: InstrumentName,
    quantity: Opt(DecimalString('the order size (spec 2.6 units); this or contracts')),
    contracts: Opt(DecimalString('the order size in contracts; must match quantity when both are given')),
    price: DecimalString('the limit price'),
  },
  Strict,
);
export const ClosePositionParams = Type.Object(
  {
    instrumentName: InstrumentName,
    type: StringEnum(['limit', 'market']),
    price: Opt(DecimalString('the limit price; required with type limit, refused with market')),
  },
  Strict,
);
export const BookSummaryParams = Type.Object({ currency: Currency, kind: Opt(StringEnum(KINDS)) }, Strict);

export const InstrumentsParams = Type.Object(
  { currency: Currency, kind: Opt(StringEnum(KINDS)), expired: Opt(Type.Boolean()) },
  Strict,
);
export const OrderBookParams = Type.Object(
  { instrumentName: InstrumentName, depth: Opt(Type.Integer({ minimum: 1, maximum: 1000 })) },
  Strict,
);
export const TickerParams = Type.Object({ instrumentName: InstrumentName }, Strict);
export const CreateComboParams = Type.Object(
  {
    trades: Type.Array(
      Type.Object(
        {
          instrumentName: InstrumentName,
          direction: StringEnum(['buy', 'sell']),
          amount: Opt(DecimalString("the leg's size; when given on both legs, equal (ratio 1:1)")),
        },
        Strict,
      ),
      { minItems: 1, maxItems: 8 },
    ),
  },
  Strict,
);
export const ComboIdParams = Type.Object({ comboId: InstrumentName }, Strict);
export const CombosParams = Type.Object({ currency: Currency }, Strict);
export const ComboIdsParams = Type.Object(
  { currency: Currency, state: Opt(StringEnum(['active', 'inactive'])) },
  Strict,
);
export const IndexPriceParams = Type.Object(
  { indexName: Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9]+_[A-Za-z]+$' }) },
  Strict,
);
/** The venue keeps an instrument's last 100 trades for the public tape. */
export const PUBLIC_TRADES_KEPT = 100;
const tapeWindow = {
  count: Opt(Type.Integer({ minimum: 1, maximum: PUBLIC_TRADES_KEPT })),
  startTimestamp: Opt(Timestamp),
  endTimestamp: Opt(Timestamp),
  sorting: Opt(StringEnum(['asc', 'desc', 'default'])),
};
export const LastTradesParams = Type.Object(
  {
    instrumentName: InstrumentName,
    count: tapeWindow.count,
    startSeq: Opt(Type.Integer({ minimum: 0 })),
    endSeq: Opt(Type.Integer({ minimum: 0 })),
    startTimestamp: tapeWindow.startTimestamp,
    endTimestamp: tapeWindow.endTimestamp,
    sorting: tapeWindow.sorting,
  },
  Strict,
);
export const LastTradesByCurrencyParams = Type.Object(
  {
    currency: Currency,
    kind: Opt(StringEnum(KINDS)),
    ...tapeWindow,
    // Many instruments' tapes: up to Deribit's 1000 (each instrument still keeps its last 100).
    count: Opt(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  Strict,
);
export const TestParams = Type.Object({ expectedResult: Opt(StringEnum(['exception'])) }, Strict);

export const AuthParams = Type.Object(
  {
    apiKey: Type.String({ minLength: 1, maxLength: 128 }),
    // Any number or string: the authenticator refuses one that is not epoch milliseconds as
    // `invalid_credentials` naming `timestamp`, as it refuses a bad Service-API-Timestamp.
    timestamp: Type.Union([Type.Number(), Type.String()], {
      description: 'epoch milliseconds, a number or a string of up to 16 digits',
    }),
    nonce: Type.String({ minLength: 1, maxLength: 128 }),
    signature: Type.String({ minLength: 1, maxLength: 256 }),
  },
  Strict,
);
export const HeartbeatParams = Type.Object(
  { interval: Type.Integer({ minimum: 10, maximum: 3600 }) },
  Strict,
);
/** Deribit's `scope`: `connection` (default, this WebSocket) or `account` (its new connections). */
export const CancelOnDisconnectParams = Type.Object(
  {
    scope: Opt(
      StringEnum(['connection', 'account'], {
        description:
          'connection (default): this WebSocket, WebSocket only; account: the default of connections that authenticate for the key’s default account from now on',
      }),
    ),
  },
  Strict,
);
export const ChannelsParams = Type.Object(
  { channels: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 100 }) },
  Strict,
);
