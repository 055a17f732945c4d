/**
 * TypeBox schemas of what the portfolio routes and channel send: the flat routes' `value`
 * (`{succ, code, message, value}`: the submit's new id, the cancel-all's ids and `info`, wire.ts
 * `portfolioInfoToWire`) and a `trade-news` message (`tradeNewsToWire`). They document them in the
 * generated OpenAPI and AsyncAPI documents; answer-schemas.test.ts holds the wire types to them at
 * compile time, and tests hold real answers to them at run time (no field left out).
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { StringEnum } from '../validation.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Closed = { additionalProperties: false } as const;
const Decimal = (description: string) => Type.String({ description });
const Ms = (description: string) => Type.Integer({ description: `${description}, Unix epoch ms` });

const PORTFOLIO_TYPES = ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'] as const;
const PORTFOLIO_STATUSES = [
  'PENDING',
  'WORKING',
  'CANCELLING',
  'COMPLETED',
  'CANCELLED',
  'EXPIRED',
  'FAILED',
] as const;

export const SubmitPortfolioValue = Type.Object(
  { portfolioId: Type.Integer({ description: 'the new portfolio (its mirrors get the next ids)' }) },
  Closed,
);

export const CancelAllPortfoliosValue = Type.Object(
  { portfolioIds: Type.Array(Type.Integer(), { description: 'the portfolios set CANCELLING' }) },
  Closed,
);

export const CancelPortfolioValue = Type.Null({ description: 'the portfolio is CANCELLING' });

const PriceOptionsEcho = Type.Object(
  {
    priceType: StringEnum(['LIMIT', 'MARKET', 'DYNAMIC']),
    price: Nullable(Type.Union([Type.String(), Type.Number()], { description: 'as sent' })),
    priceIn: Nullable(Type.String()),
    dynamicPriceStrategy: Nullable(StringEnum(['MID', 'MARK', 'MODEL', 'BID', 'ASK'])),
    dynamicPriceOffset: Nullable(Type.Union([Type.String(), Type.Number()], { description: 'as sent' })),
    dynamicMs: Nullable(Type.Integer()),
  },
  Closed,
);

const PriceSnapshotEcho = Type.Object(
  { placePriceIn: Type.String(), placePrice: Type.Number(), price: Type.Number(), priceIn: Type.String() },
  Closed,
);

const LegInfo = Type.Object(
  {
    legId: Type.Integer({ description: 'index of the leg in the submitted legs' }),
    instrument: Type.String(),
    instrumentType: StringEnum(['OPTION', 'PERPETUAL', 'DELIVERY_FUTURES', 'SPOT']),
    side: Type.Union([Type.Literal(1), Type.Literal(2)], { description: '1 = BUY, 2 = SELL' }),
    quantity: Decimal('the leg quantity, in the unit it was sent in'),
    filledQuantity: Decimal('filled by its child orders'),
    remainingQuantity: Decimal('quantity − filledQuantity'),
    averagePrice: Nullable(Decimal('exact average of the fills; null before one')),
    arrivalPrice: Nullable(
      Decimal("the leg's mid at start (mark on a one-sided book), or its priceSnapshot"),
    ),
    slippageBps: Nullable(
      Type.Number({ description: 'average against arrival, positive = worse, 2 decimals' }),
    ),
    priceOptions: PriceOptionsEcho,
    priceSnapshot: Type.Array(PriceSnapshotEcho),
    hedge: Type.Boolean(),
    priority: Type.Boolean(),
    hidden: Type.Boolean(),
    postOnly: Type.Boolean(),
    reduceOnly: Type.Boolean(),
    timeInForce: Nullable(Type.Integer({ description: 'the code sent' })),
    tradeMode: Nullable(Type.Integer({ description: 'the code sent' })),
    positionSide: Nullable(Type.Integer({ description: 'the code sent' })),
    forCcy: Nullable(Type.String()),
    workingOrderId: Nullable(Type.String({ description: 'the limit child working the leg now' })),
    childOrderIds: Type.Array(Type.String()),
  },
  Closed,
);

const PartInfo = Type.Object(
  {
    part: Type.Integer(),
    startTimestamp: Ms('start'),
    endTimestamp: Nullable(Ms('end')),
    targetQuantities: Type.Array(Decimal('per leg, cumulative lots due by the end of the part')),
    filledQuantities: Type.Array(Decimal('per leg, cumulative lots filled by its end (or now)')),
  },
  Closed,
);

const ChildOrderInfo = Type.Object(
  {
    orderId: Type.String(),
    legId: Type.Integer(),
    legIds: Type.Array(Type.Integer(), { description: 'every leg the child works (a combo child: several)' }),
    instrument: Type.String(),
    part: Type.Integer(),
    orderType: StringEnum(['market', 'limit']),
    quantity: Decimal('in the instrument’s unit'),
    filledQuantity: Decimal('in the instrument’s unit'),
    price: Nullable(Decimal('its limit; a market child’s the price it executed to')),
    open: Type.Boolean(),
    placedTimestamp: Ms('placed'),
  },
  Closed,
);

export const PortfolioInfoValue = Type.Object(
  {
    portfolioId: Type.Integer(),
    accountId: Type.Integer(),
    portfolioType: StringEnum(PORTFOLIO_TYPES),
    portfolioStatus: StringEnum(PORTFOLIO_STATUSES),
    strategy: Nullable(Type.String()),
    customizedNote: Nullable(Type.String()),
    linkedPortfolioId: Nullable(Type.Integer({ description: 'a mirror’s original' })),
    sendToDummyAccountIds: Type.Array(Type.Integer()),
    mirrorPortfolioIds: Type.Array(Type.Integer()),
    submitTimestamp: Ms('submitted'),
    startTimestamp: Nullable(Ms('started working')),
    plannedStartTimestamp: Ms('due to start'),
    updateTimestamp: Ms('last change'),
    endTimestamp: Nullable(Ms('ended')),
    endReason: Nullable(
      StringEnum([
        'filled',
        'duration_elapsed',
        'parts_elapsed',
        'total_limit',
        'user_cancel',
        'orders_closed',
        'child_rejected',
        'instrument_expired',
      ]),
    ),
    endMessage: Nullable(Type.String({ description: 'what went wrong, for FAILED' })),
    balanceTrade: Nullable(
      Type.Object(
        {
          parts: Type.Integer(),
          eachLimitMs: Type.Integer(),
          totalLimitMs: Type.Integer(),
          totalEndAction: Type.Union([Type.Literal(1), Type.Literal(2)]),
          totalMs: Type.Integer({ description: 'ms worked so far (to the end once ended)' }),
        },
        Closed,
      ),
    ),
    twapTrade: Nullable(
      Type.Object(
        {
          startTimestamp: Ms('start'),
          durationSec: Type.Number(),
          frequencySec: Type.Number(),
        },
        Closed,
      ),
    ),
    icebergTrade: Nullable(
      Type.Object(
        {
          displayQuantity: Decimal('shown at a time'),
          refreshQuantity: Nullable(Decimal('re-shown after a refill')),
        },
        Closed,
      ),
    ),
    legs: Type.Array(LegInfo),
    currentPart: Nullable(Type.Integer({ description: 'BALANCE part or TWAP slice being worked' })),
    parts: Type.Array(PartInfo),
    childOrders: Type.Array(ChildOrderInfo),
  },
  { ...Closed, description: 'spec 4.1 info: status, per-leg progress, slippage, parts and child orders' },
);

export const TradeNewsMessage = Type.Object(
  {
    type: StringEnum(
      [
        'PORTFOLIO_SUBMITTED',
        'PORTFOLIO_WORKING',
        'PART_STARTED',
        'ORDER_PLACED',
        'ORDER_FILLED',
        'PORTFOLIO_CANCELLING',
        'PORTFOLIO_CANCELLED',
        'PORTFOLIO_COMPLETED',
        'PORTFOLIO_EXPIRED',
        'PORTFOLIO_FAILED',
      ],
      { description: 'what happened' },
    ),
    portfolioId: Type.Integer(),
    accountId: Type.Integer(),
    portfolioType: StringEnum(PORTFOLIO_TYPES),
    portfolioStatus: StringEnum(PORTFOLIO_STATUSES, { description: 'the status after it' }),
    timestamp: Ms('when'),
    legId: Type.Optional(Type.Integer({ description: 'ORDER_PLACED, ORDER_FILLED: the leg' })),
    part: Type.Optional(Type.Integer({ description: 'PART_STARTED: the part or slice started' })),
    orderId: Type.Optional(Type.String({ description: 'ORDER_PLACED, ORDER_FILLED: the child order' })),
    instrument: Type.Optional(Type.String()),
    quantity: Type.Optional(Decimal('ORDER_PLACED: the child’s quantity; ORDER_FILLED: the lots filled')),
    price: Type.Optional(
      Nullable(Decimal('ORDER_PLACED: the child’s limit (null at market); ORDER_FILLED: the fill’s average')),
    ),
    endReason: Type.Optional(Type.String({ description: 'the end messages: why it ended' })),
    endMessage: Type.Optional(Type.String({ description: 'PORTFOLIO_FAILED: what went wrong' })),
    linkedPortfolioId: Type.Optional(Type.Integer({ description: 'a mirror’s original' })),
  },
  { ...Closed, description: 'one portfolio lifecycle message' },
);
