/**
 * TypeBox schemas of the flat portfolio routes (spec 2.1–2.5): the submit body, the cancel and
 * cancel-all bodies and the info query. They are the source of the routes' TypeScript types and of
 * the generated OpenAPI document.
 *
 * Invariant: the route layer does NOT check requests against these schemas
 * (`handlerValidates` on the route): `validate.ts` and the route handlers decide, because they
 * answer with finer codes than a generic schema check could (`value_required` for a missing field,
 * `invalid_portfolio` for cross-field rules, `account_not_owned`, grid errors) and name nested
 * fields as `legs[1].priceOptions.price`. Every value these schemas describe is one the handlers
 * accept; unknown fields are ignored.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { DecimalString, Opt, PLAIN_TEXT } from '../validation.ts';
import {
  CUSTOMIZED_NOTE_MAX,
  MAX_BALANCE_PARTS,
  MAX_PORTFOLIO_LEGS,
  MAX_PRICE_SNAPSHOT,
  MAX_TWAP_SLICES,
  MIN_DYNAMIC_MS,
  PORTFOLIO_HORIZON_MS,
  STRATEGY_MAX,
} from './validate.ts';

const HANDLER_VALIDATES =
  'Checked by the service, not by a generic schema check: a missing field answers value_required, ' +
  'a wrong type or value invalid_params, a cross-field rule invalid_portfolio; data.field names the ' +
  'field (e.g. legs[1].priceOptions.price). Unknown fields are ignored.';

const Long = (description: string, minimum?: number, maximum?: number) =>
  Type.Integer({
    description,
    ...(minimum === undefined ? {} : { minimum }),
    ...(maximum === undefined ? {} : { maximum }),
  });

const HORIZON_SEC = PORTFOLIO_HORIZON_MS / 1000;

/** A decimal sent as a JSON number or a decimal string. */
const Decimal = (description: string) => Type.Union([Type.Number(), DecimalString()], { description });

/** Literal types are kept (`C` is e.g. `1 | 2`), so the TypeScript type is as narrow as the schema. */
const IntCode = <const C extends number>(codes: readonly C[], description: string) =>
  Type.Union(
    codes.map((code) => Type.Literal(code)),
    { description },
  );

export const PortfolioTypeSchema = Type.Union(
  (['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'] as const).map((type) => Type.Literal(type)),
  { description: 'BALANCE, TWAP, COMMON or ICEBERG' },
);

export const BalanceTradeSchema = Type.Object(
  {
    parts: Long(
      'split count (3 means three tranches); at most the lots of the smallest non-hedge leg',
      1,
      MAX_BALANCE_PARTS,
    ),
    eachLimitMs: Long(
      'time budget per part, ms; without a totalLimitMs, parts × eachLimitMs is within the horizon too',
      1,
      PORTFOLIO_HORIZON_MS,
    ),
    totalLimitMs: Long('total time budget, ms; 0 disables the total cap', 0, PORTFOLIO_HORIZON_MS),
    totalEndAction: IntCode([1, 2], '1 = CANCEL_REMAINING, 2 = FILL_BY_MARKET'),
  },
  { description: 'spec 2.2; required when portfolioType is BALANCE' },
);

export const TwapTradeSchema = Type.Object(
  {
    startTimestamp: Opt(
      Long(
        'Unix epoch ms; null or omitted starts at the server time; not more than the tolerance in the past, nor more than 30 days ahead',
        0,
      ),
    ),
    durationSec: Long('total execution duration, seconds', 1, HORIZON_SEC),
    frequencySec: Long(
      `interval between executions, seconds; at most ${MAX_TWAP_SLICES} slices (durationSec / frequencySec)`,
      1,
      HORIZON_SEC,
    ),
  },
  { description: 'spec 2.3; required when portfolioType is TWAP' },
);

export const IcebergTradeSchema = Type.Object(
  {
    displayQuantity: Decimal('quantity shown on the book at a time (on the lot grid)'),
    refreshQuantity: Opt(Decimal('quantity re-shown after a refill; default displayQuantity')),
  },
  { description: 'spec 4; required when portfolioType is ICEBERG (exactly 1 leg)' },
);

/** priceOptions; `price` is a string for BALANCE, a number for TWAP, either for COMMON/ICEBERG. */
function priceOptionsSchema<P extends TSchema>(price: P, priceNote: string) {
  return Type.Object(
    {
      priceType: Type.Union(
        (['LIMIT', 'MARKET', 'DYNAMIC'] as const).map((type) => Type.Literal(type)),
        { description: 'LIMIT, MARKET or DYNAMIC' },
      ),
      price: Opt(price),
      priceIn: Opt(
        Type.String({
          description: `${priceNote}; USD, USDT, USDC, the base or quote coin, or IV (options only, price in vol percent)`,
        }),
      ),
      dynamicPriceStrategy: Opt(
        Type.Union(
          (['MID', 'MARK', 'MODEL', 'BID', 'ASK'] as const).map((strategy) => Type.Literal(strategy)),
          { description: 'required when priceType is DYNAMIC' },
        ),
      ),
      dynamicPriceOffset: Opt(Decimal('offset applied to the dynamic reference; may be negative')),
      dynamicMs: Opt(
        Long(
          'reprice interval, ms; TWAP: required with a dynamicPriceStrategy',
          MIN_DYNAMIC_MS,
          PORTFOLIO_HORIZON_MS,
        ),
      ),
    },
    {
      description: 'spec 2.5. For MARKET, price, priceIn and the dynamic fields may be null or omitted.',
    },
  );
}

const SNAPSHOT_UNIT =
  "a unit the leg's priceIn takes (e.g. USD, BTC, IV for options; any case, stored upper-case)";
const PriceSnapshotEntrySchema = Type.Object({
  placePriceIn: Type.String({ description: SNAPSHOT_UNIT }),
  placePrice: Type.Number({
    exclusiveMinimum: 0,
    description: 'in placePriceIn, as a leg price in that unit',
  }),
  price: Type.Number({ exclusiveMinimum: 0, description: 'in priceIn, as a leg price in that unit' }),
  priceIn: Type.String({ description: SNAPSHOT_UNIT }),
});

function legSchema<P extends TSchema>(price: P, priceNote: string) {
  return Type.Object(
    {
      instrument: Type.String({ description: 'instrument name' }),
      instrumentType: Type.Union(
        (['OPTION', 'PERPETUAL', 'DELIVERY_FUTURES', 'SPOT'] as const).map((type) => Type.Literal(type)),
        { description: 'must match the instrument' },
      ),
      side: IntCode([1, 2], '1 = BUY, 2 = SELL'),
      quantity: Decimal('total (TWAP) / order (Balance) quantity, on the lot grid'),
      priceOptions: priceOptionsSchema(price, priceNote),
      priceSnapshot: Opt(
        Type.Array(PriceSnapshotEntrySchema, {
          description: 'reference prices at submit time (audit)',
          maxItems: MAX_PRICE_SNAPSHOT,
        }),
      ),
      timeInForce: Opt(IntCode([1, 2, 3, 4], '1 = GTC, 2 = IOC, 3 = FOK, 4 = GTD')),
      postOnly: Opt(Type.Boolean({ description: 'default false' })),
      reduceOnly: Opt(Type.Boolean({ description: 'default false' })),
      hidden: Opt(Type.Boolean({ description: 'default false' })),
      tradeMode: Opt(IntCode([1, 2, 3], '1 = CASH, 2 = CROSS, 3 = ISOLATED')),
      positionSide: Opt(IntCode([1, 2, 3], '1 = LONG, 2 = SHORT, 3 = NET')),
      hedge: Opt(
        Type.Boolean({
          description: 'default false; non-option legs of a mixed option + linear portfolio are hedge legs',
        }),
      ),
      priority: Opt(
        Type.Boolean({
          description: 'BALANCE only: the leading leg; at most 1 per portfolio, never a hedge leg',
        }),
      ),
      forCcy: Opt(
        Type.String({ description: 'default the base coin; every TWAP leg must share one forCcy' }),
      ),
    },
    { description: 'spec 2.4' },
  );
}

const BalancePrice = DecimalString({ description: 'BALANCE: a decimal string, e.g. "0.0425"' });
const TwapPrice = Type.Number({ description: 'TWAP: a JSON number' });
const AnyPrice = Decimal('COMMON / ICEBERG: a number or a decimal string');

/**
 * One submit shape. Generic over the type, the block and the price so that the TypeScript type
 * (the sdk's `submitPortfolio` body) keeps the `portfolioType` literal, the type's block and the
 * price's type: a misspelled field or type is a compile error.
 */
function submitSchema<T extends string, K extends Record<string, TSchema>, P extends TSchema>(
  type: T,
  block: K,
  price: P,
  priceNote: string,
) {
  return Type.Object(
    {
      accountId: Long('an account of the key', 1),
      portfolioType: Type.Literal(type),
      strategy: Opt(
        Type.String({
          description: 'free-text label (Custom, Straddle, ...)',
          maxLength: STRATEGY_MAX,
          pattern: PLAIN_TEXT,
        }),
      ),
      ...block,
      legs: Type.Array(legSchema(price, priceNote), { minItems: 1, maxItems: MAX_PORTFOLIO_LEGS }),
      customizedNote: Opt(Type.String({ maxLength: CUSTOMIZED_NOTE_MAX, pattern: PLAIN_TEXT })),
      sendToDummyAccountIds: Opt(
        Type.Array(Long('another account of the key to mirror the portfolio to', 1), {
          uniqueItems: true,
        }),
      ),
    },
    { title: `${type} portfolio` },
  );
}

const PRICE_REQUIRED_ALWAYS = 'required unless priceType is MARKET';

/** Body of `POST /portfolios/submit` (spec 2.1): one shape per portfolioType. */
export const SubmitPortfolioBody = Type.Union(
  [
    submitSchema('BALANCE', { balanceTrade: BalanceTradeSchema }, BalancePrice, PRICE_REQUIRED_ALWAYS),
    submitSchema('TWAP', { twapTrade: TwapTradeSchema }, TwapPrice, PRICE_REQUIRED_ALWAYS),
    submitSchema('COMMON', {}, AnyPrice, 'optional'),
    submitSchema('ICEBERG', { icebergTrade: IcebergTradeSchema }, AnyPrice, 'optional'),
  ],
  { description: `Flat body (spec 2.1). ${HANDLER_VALIDATES}` },
);
export type SubmitPortfolioBody = Static<typeof SubmitPortfolioBody>;

/** Body of `POST /portfolios/cancel`. */
export const CancelPortfolioBody = Type.Object(
  {
    portfolioId: Long('the portfolio (an integer string is accepted too)', 1),
    accountId: Opt(Long('when sent, an account of the key', 1)),
  },
  { description: HANDLER_VALIDATES },
);
export type CancelPortfolioBody = Static<typeof CancelPortfolioBody>;

/** Body of `POST /portfolios/cancel-all`. */
export const CancelAllPortfoliosBody = Type.Object(
  {
    accountId: Long('an account of the key (an integer string is accepted too)', 1),
    portfolioType: Opt(PortfolioTypeSchema),
  },
  { description: HANDLER_VALIDATES },
);
export type CancelAllPortfoliosBody = Static<typeof CancelAllPortfoliosBody>;

/** Query of `GET /portfolios/info`. */
export const PortfolioInfoQuery = Type.Object(
  {
    portfolioId: Type.String({ pattern: '^\\d{1,16}$', description: 'the portfolio id (positive integer)' }),
  },
  { description: HANDLER_VALIDATES },
);
export type PortfolioInfoQuery = Static<typeof PortfolioInfoQuery>;
