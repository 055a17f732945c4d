/**
 * The one error catalogue of the service: every refusal the service can give, with a stable
 * numeric code, a short name, a human message and the HTTP status it travels with.
 *
 * Rules:
 * - Codes follow Deribit's legacy table where the meaning is the same; codes the venue adds
 *   itself live in 20000–20999 (portfolios/algorithms), 21000–21999 (accounts/keys) and
 *   22000–22999 (venue rules). A code is never reused; a retired code stays here, commented.
 * - `docs/errors.md` lists exactly these entries; a test fails when the two drift apart.
 * - HTTP status: 200 for a well-formed envelope refused by the service, 400 for a body that
 *   is not an envelope, 401 for failed authentication, 403 for missing permission, 413 for
 *   oversized bodies, 429 for rate limiting (SEMANTICS.md, Transport).
 */

export interface ErrorDefinition {
  readonly code: number;
  readonly message: string;
  readonly httpStatus: number;
}

export const ERROR_CATALOGUE = {
  // Orders and pricing (Deribit numbers)
  error: { code: 10001, message: 'error', httpStatus: 200 },
  qty_too_low: { code: 10002, message: 'quantity is below the instrument minimum', httpStatus: 200 },
  order_overlap: {
    code: 10003,
    message: 'order would trade against an order of the same account',
    httpStatus: 200,
  },
  order_not_found: { code: 10004, message: 'order not found', httpStatus: 200 },
  price_too_low: { code: 10005, message: 'price is below the allowed band', httpStatus: 200 },
  price_too_high: { code: 10007, message: 'price is above the allowed band', httpStatus: 200 },
  not_enough_funds: { code: 10009, message: 'not enough funds', httpStatus: 200 },
  already_closed: { code: 10010, message: 'order is already closed', httpStatus: 200 },
  price_not_allowed: { code: 10011, message: 'price is not allowed for this order type', httpStatus: 200 },
  book_closed: { code: 10012, message: 'book is closed', httpStatus: 200 },
  max_open_orders: { code: 10014, message: 'too many open orders', httpStatus: 200 },
  invalid_instrument: { code: 10020, message: 'invalid or unsupported instrument', httpStatus: 200 },
  invalid_amount: { code: 10021, message: 'invalid quantity', httpStatus: 200 },
  invalid_price: { code: 10023, message: 'invalid price', httpStatus: 200 },
  invalid_order_id: { code: 10025, message: 'invalid order id', httpStatus: 200 },
  precision_exceeded: { code: 10026, message: 'too many decimal places', httpStatus: 200 },
  too_many_requests: { code: 10028, message: 'too many requests', httpStatus: 429 },
  not_owner_of_order: { code: 10029, message: 'not the owner of this order', httpStatus: 200 },
  invalid_args_for_instrument: {
    code: 10031,
    message: 'arguments are not valid for this instrument',
    httpStatus: 200,
  },
  trigger_price_too_high: { code: 10034, message: 'trigger price is too high', httpStatus: 200 },
  trigger_price_too_low: { code: 10035, message: 'trigger price is too low', httpStatus: 200 },
  invalid_max_show_amount: { code: 10036, message: 'invalid display amount', httpStatus: 200 },
  settlement_in_progress: { code: 10041, message: 'settlement in progress', httpStatus: 200 },
  off_grid: { code: 10043, message: 'value is not on the instrument grid', httpStatus: 200 },
  trigger_price_wrong_tick: {
    code: 10044,
    message: 'trigger price is not on the tick grid',
    httpStatus: 200,
  },
  already_filled: { code: 11008, message: 'order is already filled', httpStatus: 200 },
  post_only_price_modification_not_possible: {
    code: 11021,
    message: 'post-only price cannot be adjusted',
    httpStatus: 200,
  },
  invalid_arguments: { code: 11029, message: 'invalid arguments', httpStatus: 200 },
  other_reject: { code: 11030, message: 'rejected', httpStatus: 200 },
  no_more_triggers: { code: 11035, message: 'too many trigger orders', httpStatus: 200 },
  invalid_trigger_price: { code: 11036, message: 'invalid trigger price', httpStatus: 200 },
  outdated_instrument_for_iv_order: {
    code: 11037,
    message: 'instrument is too close to expiry for an IV order',
    httpStatus: 200,
  },
  no_adv_for_futures: { code: 11038, message: 'advanced orders are for options only', httpStatus: 200 },
  no_adv_postonly: { code: 11039, message: 'advanced orders cannot be post-only', httpStatus: 200 },
  not_adv_order: { code: 11041, message: 'not an advanced order', httpStatus: 200 },
  permission_denied: { code: 11042, message: 'permission denied', httpStatus: 200 },
  not_open_order: { code: 11044, message: 'order is not open', httpStatus: 200 },
  unsupported_arg_combination: {
    code: 11047,
    message: 'unsupported combination of arguments',
    httpStatus: 200,
  },
  bad_request: { code: 11050, message: 'bad request', httpStatus: 400 },
  post_only_reject: { code: 11054, message: 'post-only order would take liquidity', httpStatus: 200 },
  post_only_not_allowed: { code: 11055, message: 'post-only is not allowed for this order', httpStatus: 200 },
  value_required: { code: 13010, message: 'value required', httpStatus: 200 },
  not_found: { code: 13020, message: 'not found', httpStatus: 200 },
  mmp_trigger: { code: 13030, message: 'market maker protection is frozen', httpStatus: 200 },
  non_unique_order_label: { code: 13032, message: 'label is not unique', httpStatus: 200 },
  mmp_required: {
    code: 13040,
    message: 'market maker protection is not configured for this index',
    httpStatus: 200,
  },
  replaced: { code: 13777, message: 'order was replaced by a later edit', httpStatus: 200 },
  timed_out: {
    code: 13888,
    message: 'request reached the matching engine after validUntil',
    httpStatus: 200,
  },
  no_more_oto_orders: { code: 13901, message: 'too many linked orders', httpStatus: 200 },

  // Block RFQ (Deribit numbers)
  too_many_quotes_per_block_rfq: { code: 13905, message: 'too many quotes for this RFQ', httpStatus: 200 },
  too_many_quotes_per_block_rfq_side: {
    code: 13906,
    message: 'too many quotes on this side of the RFQ',
    httpStatus: 200,
  },
  not_fully_filled: {
    code: 13907,
    message: 'RFQ cannot be fully filled by the matched quotes',
    httpStatus: 200,
  },
  quote_crossed: { code: 13910, message: "quote crosses the maker's own quote", httpStatus: 200 },
  rfq_not_open: { code: 13920, message: 'RFQ is not open', httpStatus: 200 },
  quote_not_open: { code: 13921, message: 'quote is not open', httpStatus: 200 },
  // Deribit lists too_many_open_block_rfqs under 13907, the same number as not_fully_filled;
  // a code is never shared here, so it takes the next free venue number of the RFQ range.
  too_many_open_block_rfqs: { code: 13922, message: 'too many open RFQs for this account', httpStatus: 200 },
  anonymous_rfq_too_few_makers: {
    code: 13923,
    message: 'an anonymous RFQ targets too few makers',
    httpStatus: 200,
  },

  // Authentication and permissions (Deribit numbers)
  authorization_required: { code: 10000, message: 'authorization required', httpStatus: 401 },
  invalid_credentials: { code: 13004, message: 'invalid credentials', httpStatus: 401 },
  unauthorized: { code: 13009, message: 'unauthorized', httpStatus: 401 },
  forbidden: { code: 13021, message: 'forbidden', httpStatus: 200 },
  clock_skew: { code: 13011, message: 'request timestamp is too far from server time', httpStatus: 401 },
  nonce_reused: { code: 13012, message: 'nonce already used for a different request', httpStatus: 401 },

  // Request level (JSON-RPC numbers)
  parse_error: { code: -32700, message: 'parse error', httpStatus: 400 },
  request_too_large: { code: -32600, message: 'request entity too large', httpStatus: 413 },
  method_not_found: { code: -32601, message: 'method not found', httpStatus: 200 },
  invalid_params: { code: -32602, message: 'invalid params', httpStatus: 200 },
  missing_params: { code: -32000, message: 'missing params', httpStatus: 200 },
  internal_error: { code: 11094, message: 'internal server error', httpStatus: 200 },
  unavailable: { code: 13503, message: 'service unavailable', httpStatus: 200 },

  // Portfolios and algorithms (venue codes)
  portfolio_not_found: { code: 20001, message: 'portfolio not found', httpStatus: 200 },
  portfolio_not_active: { code: 20002, message: 'portfolio is not active', httpStatus: 200 },
  invalid_portfolio: { code: 20003, message: 'invalid portfolio', httpStatus: 200 },

  // Accounts and keys (venue codes)
  account_not_found: { code: 21001, message: 'account not found', httpStatus: 200 },
  account_not_owned: { code: 21002, message: 'account does not belong to this key', httpStatus: 200 },

  // Venue rules (venue codes)
  reduce_only_violation: {
    code: 22001,
    message: 'reduce-only order would increase the position',
    httpStatus: 200,
  },
  instrument_expired: { code: 22002, message: 'instrument has expired', httpStatus: 200 },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorName = keyof typeof ERROR_CATALOGUE;

/** Structured details of a refusal; `field` names the offending input where there is one. */
export interface ErrorData {
  readonly field?: string;
  readonly [key: string]: unknown;
}

/**
 * A refusal with a catalogue name. The core returns refusals as results on the hot path;
 * parsing and validation at the edge throw this, and the gateway maps it to the wire.
 */
export class VenueError extends Error {
  readonly code: number;
  readonly httpStatus: number;

  constructor(
    readonly errorName: ErrorName,
    message?: string,
    readonly data?: ErrorData,
  ) {
    const definition = ERROR_CATALOGUE[errorName];
    super(message ?? definition.message);
    this.name = 'VenueError';
    this.code = definition.code;
    this.httpStatus = definition.httpStatus;
  }
}
