/**
 * Which currency an RFQ instrument, RFQ or RFQ trade is filed under, for every `currency`
 * filter of the Block RFQ API (get_instruments, get_rfqs, get_trades, the block_rfq channels).
 *
 * Rule (one classification everywhere): an instrument belongs to its base currency and to its
 * quote currency, as `block/rfqs/get_instruments` lists it; an RFQ (and its trade) belongs to
 * the base and quote currency its legs share. So a BTC_USDC option RFQ is found under BTC and
 * under USDC, an inverse BTC option RFQ under BTC only. `any` matches everything.
 */

/** The currencies the spec lists for Block RFQ filters (4.10) and channels, besides `any`. */
export const RFQ_CURRENCIES: readonly string[] = ['BTC', 'ETH', 'USDC', 'USDT', 'EURR'];

/** `text` as a filter: an upper-case currency symbol, or `ANY`. */
export function currencyFilter(text: string): string {
  return text.toUpperCase();
}

/** True when a filter (case-insensitive symbol or `any`) matches a base/quote currency pair. */
export function matchesCurrency(filter: string, baseCurrency: string, quoteCurrency: string | null): boolean {
  const wanted = currencyFilter(filter);
  return wanted === 'ANY' || wanted === baseCurrency || wanted === quoteCurrency;
}

/** The currencies a base/quote pair is filed under (each once). */
export function currenciesOf(baseCurrency: string, quoteCurrency: string | null): string[] {
  return quoteCurrency === null || quoteCurrency === baseCurrency
    ? [baseCurrency]
    : [baseCurrency, quoteCurrency];
}

/** True for `any` and the spec's currency symbols, in any case. */
export function isRfqCurrency(text: string): boolean {
  const wanted = currencyFilter(text);
  return wanted === 'ANY' || RFQ_CURRENCIES.includes(wanted);
}
