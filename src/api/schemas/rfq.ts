/**
 * Block RFQ wire schemas: params of the `block/rfqs/*` methods (spec 4.6–4.10 plus get_rfqs,
 * get_quotes, edit_quote, cancel_quote, cancel_all_quotes, accept) and the RFQ (2.8), quote
 * (2.9), trade (4.9) and instrument (2.10) objects. Decimals are strings; times ms since epoch.
 */
import { type Static, Type } from '@sinclair/typebox';
import { DecimalString, Opt, PLAIN_TEXT, Strict, StringEnum } from '../validation.ts';

const S = Type.String();
const I = Type.Integer();
const B = Type.Boolean();
const Side = StringEnum(['buy', 'sell']);
const Id = Type.String({ minLength: 1, maxLength: 32, pattern: '^[0-9]+$' });
const InstrumentName = Type.String({ minLength: 1, maxLength: 64, pattern: PLAIN_TEXT });
// Stored as text in the read store, which PostgreSQL refuses with a NUL in it.
const Label = Type.String({ maxLength: 64, pattern: PLAIN_TEXT });
const Timestamp = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 });
const Currency = Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9]+$' });
const Count = Type.Integer({ minimum: 1, maximum: 1000 });

/**
 * One entry of an RFQ's allocation list as the taker sees it (spec 2.8), on the RFQ and on the
 * taker's trades from it (spec 2.7 `tradeAllocations`).
 */
export const RfqAllocationSchema = Type.Object({
  amount: S,
  userId: Type.Optional(I),
  clientInfo: Type.Optional(
    Type.Object({ clientId: I, clientLinkId: I, name: Type.Union([I, Type.Null()]) }),
  ),
});

export const EXECUTION_INSTRUCTIONS = ['all_or_none', 'any_part_of'] as const;
export const RFQ_STATUSES = [
  'created',
  'open',
  'filled',
  'traded',
  'cancelled',
  'expired',
  'closed',
  'failed',
] as const;

const HedgeParams = Type.Object(
  { instrumentName: InstrumentName, quantity: DecimalString(), side: Side, price: DecimalString() },
  Strict,
);

export const CreateRfqParams = Type.Object(
  {
    label: Opt(Label),
    makers: Opt(
      Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: PLAIN_TEXT }), { maxItems: 100 }),
    ),
    disclosed: Opt(B),
    legs: Type.Array(
      Type.Object({ instrumentName: InstrumentName, quantity: DecimalString(), side: Side }, Strict),
      {
        minItems: 1,
        maxItems: 20,
      },
    ),
    hedge: Opt(HedgeParams),
    tradeAllocations: Opt(
      Type.Array(
        Type.Object(
          {
            amount: DecimalString(),
            userId: Opt(I),
            // Spec 2.8 documents `name` as an integer.
            clientInfo: Opt(Type.Object({ clientId: I, clientLinkId: I, name: Opt(I) }, Strict)),
          },
          Strict,
        ),
        { maxItems: 100 },
      ),
    ),
  },
  Strict,
);
export type CreateRfqParams = Static<typeof CreateRfqParams>;

export const RfqIdParams = Type.Object({ blockRfqId: Id }, Strict);
export const CancelTriggerParams = Type.Object({ blockRfqId: Id, side: Opt(Side) }, Strict);

const QuoteLegParams = Type.Object(
  { instrumentName: InstrumentName, price: DecimalString(), ratio: DecimalString(), side: Side },
  Strict,
);

const quoteFields = {
  label: Opt(Label),
  executionInstruction: StringEnum(EXECUTION_INSTRUCTIONS),
  legs: Type.Array(QuoteLegParams, { minItems: 1, maxItems: 20 }),
  hedge: Opt(HedgeParams),
  quantity: DecimalString(),
  side: Side,
  price: Opt(DecimalString()),
  expiresAt: Opt(Timestamp),
};

export const CreateQuoteParams = Type.Object({ blockRfqId: Id, ...quoteFields }, Strict);
export type CreateQuoteParams = Static<typeof CreateQuoteParams>;
export const EditQuoteParams = Type.Object({ quoteId: Id, ...quoteFields }, Strict);
export type EditQuoteParams = Static<typeof EditQuoteParams>;
export const QuoteIdParams = Type.Object({ quoteId: Id }, Strict);
export const CancelAllQuotesParams = Type.Object({ blockRfqId: Opt(Id) }, Strict);

export const AcceptParams = Type.Object(
  {
    blockRfqId: Id,
    side: Side,
    price: DecimalString('worst acceptable strategy price'),
    quantity: Opt(DecimalString()),
    timeInForce: Opt(StringEnum(['fill_or_kill', 'good_til_cancelled'])),
    legs: Opt(
      Type.Array(Type.Object({ instrumentName: InstrumentName, ratio: DecimalString(), side: Side }, Strict)),
    ),
    hedge: Opt(
      Type.Object(
        {
          instrumentName: InstrumentName,
          quantity: DecimalString(),
          side: Side,
          price: DecimalString('worst acceptable hedge price'),
        },
        {
          ...Strict,
          description:
            "the RFQ's hedge restated (instrument, side, its quantity or the accepted quantity's share) with the worst hedge price the taker trades at: quotes whose hedge price is worse are passed over",
        },
      ),
    ),
  },
  Strict,
);
export type AcceptParams = Static<typeof AcceptParams>;

export const GetRfqsParams = Type.Object(
  {
    blockRfqId: Opt(Id),
    role: Opt(StringEnum(['taker', 'maker'])),
    status: Opt(StringEnum(RFQ_STATUSES)),
    currency: Opt(Currency),
    count: Opt(Count),
    continuation: Opt(Id),
  },
  Strict,
);
export type GetRfqsParams = Static<typeof GetRfqsParams>;

export const GetQuotesParams = Type.Object(
  { blockRfqId: Opt(Id), quoteId: Opt(Id), label: Opt(Label) },
  Strict,
);

export const GetTradesParams = Type.Object(
  {
    currency: Currency,
    continuation: Opt(Type.String({ maxLength: 40, pattern: '^\\d{1,15}:\\d{1,15}$' })),
    count: Opt(Count),
  },
  Strict,
);

export const GetRfqInstrumentsParams = Type.Object(
  {
    // Any case, as the other Block RFQ currency filters; the handler checks the symbol.
    currency: Type.String({
      ...Currency,
      description: 'BTC, ETH, USDC, USDT, EURR or any, in any case',
    }),
    kind: Opt(StringEnum(['future', 'option', 'spot', 'future_combo', 'option_combo'])),
    expired: Opt(B),
  },
  Strict,
);

// ---------------------------------------------------------------------------------------------
// Objects

const HedgeSchema = Type.Object({ instrumentName: S, quantity: S, side: Side, price: S });
const BookEntry = Type.Object({
  price: S,
  quantity: S,
  executionInstruction: S,
  makers: Type.Array(S),
  expiresAt: Type.Union([I, Type.Null()]),
  lastUpdatedAt: I,
  hedgePrice: Type.Optional(
    Type.String({
      description:
        "with a hedge: the price the quote trades the hedge at (the maker's, or the RFQ's when the quote set none)",
    }),
  ),
});

export const QuoteSchema = Type.Object({
  quoteId: S,
  blockRfqId: S,
  label: S,
  quantity: S,
  price: S,
  side: Side,
  executionInstruction: S,
  filledQuantity: S,
  legs: Type.Array(Type.Object({ instrumentName: S, ratio: S, side: Side, price: S })),
  hedge: Type.Optional(HedgeSchema),
  status: StringEnum(['open', 'filled', 'cancelled', 'expired']),
  statusReason: Type.Union([S, Type.Null()]),
  replaced: B,
  createdAt: I,
  lastUpdatedAt: I,
  expiresAt: Type.Union([I, Type.Null()]),
  appName: Type.String({
    description:
      "the desk name of the maker key that placed the quote (Deribit's app_name); quotes are shown only to that desk",
  }),
});
export type WireQuote = Static<typeof QuoteSchema>;

export const RfqSchema = Type.Object({
  blockRfqId: S,
  quantity: S,
  comboId: Type.Union([S, Type.Null()]),
  createdAt: I,
  expiresAt: I,
  makers: Type.Array(S),
  role: StringEnum(['taker', 'maker']),
  legs: Type.Array(Type.Object({ instrumentName: S, ratio: S, side: Side })),
  hedge: Type.Optional(HedgeSchema),
  disclosed: B,
  label: Type.Optional(S),
  status: StringEnum(RFQ_STATUSES),
  closedReason: Type.Union([S, Type.Null()]),
  minTradeAmount: S,
  includedInTakerRating: Type.Optional(B),
  tradeAllocations: Type.Optional(Type.Array(RfqAllocationSchema)),
  taker: Type.Optional(
    Type.Union([S, Type.Null()], { description: 'maker view: the taker alias when disclosed' }),
  ),
  tradeTriggers: Type.Optional(
    Type.Array(
      Type.Object({ side: Side, price: S, quantity: S, createdAt: I, hedgePrice: Type.Optional(S) }),
      {
        description:
          'taker view: waiting good_til_cancelled accepts, at most one per side; they fire when a quote crosses',
      },
    ),
  ),
  bids: Type.Optional(
    Type.Array(BookEntry, {
      description: 'taker view once open: one entry per price, execution instruction and hedge price',
    }),
  ),
  asks: Type.Optional(
    Type.Array(BookEntry, {
      description: 'taker view once open: one entry per price, execution instruction and hedge price',
    }),
  ),
  quotes: Type.Optional(Type.Array(QuoteSchema, { description: "maker view: the desk's own quotes" })),
});
export type WireRfq = Static<typeof RfqSchema>;

export const RfqTradeSchema = Type.Object({
  blockRfqId: S,
  quantity: S,
  comboId: Type.Optional(S),
  side: Side,
  legs: Type.Array(Type.Object({ instrumentName: S, side: Side, price: S, ratio: S })),
  markPrice: Type.Union([S, Type.Null()]),
  timestamp: I,
  hedge: Type.Optional(HedgeSchema),
  trades: Type.Array(Type.Object({ quantity: S, side: Side, hedgeQuantity: Type.Optional(S), price: S })),
});
export type WireRfqTrade = Static<typeof RfqTradeSchema>;

export const RfqInstrumentSchema = Type.Object({
  instrumentName: S,
  baseCurrency: S,
  kind: S,
  marginKind: StringEnum(['linear', 'reversed']),
  optionKind: Type.Union([StringEnum(['call', 'put']), Type.Null()]),
  strike: Type.Union([S, Type.Null()]),
  expiration: Type.Union([I, Type.Null()]),
});
export type WireRfqInstrument = Static<typeof RfqInstrumentSchema>;

export const AcceptResultSchema = Type.Object({
  rfq: RfqSchema,
  blockTrades: Type.Array(
    Type.Object({
      blockTradeId: S,
      quoteId: S,
      quantity: S,
      price: S,
      hedgeQuantity: Type.Optional(S),
      timestamp: I,
      tradeIds: Type.Array(S),
    }),
  ),
  trigger: Type.Union([
    Type.Object({ side: Side, price: S, quantity: S, hedgePrice: Type.Optional(S) }),
    Type.Null(),
  ]),
});

export const PageOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ continuation: Type.Union([S, Type.Null()]), results: Type.Array(item) });
