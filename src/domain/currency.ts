/**
 * Which currencies an instrument, the orders, trades and positions on it, an RFQ and an RFQ trade
 * are filed under: one classification for every `currency` filter of the API (get_instruments,
 * the order, trade and position methods, cancel_all_by_currency, the user.orders/user.trades
 * channels, and the Block RFQ filters and channels).
 *
 * Rule: an instrument belongs to its base currency (its exposure) and to the currency it is
 * quoted and settled in, so a linear `BTC_USDC` product (option, perpetual, spot pair) is found
 * under BTC and under USDC, and an inverse BTC product under BTC only: its margin, fees and PnL are
 * in BTC, and its USD quote is no currency of the venue (no balance is kept in it). An RFQ (and
 * its trade) belongs to the base and quote currency its legs share. `any` matches everything.
 *
 * The filter names a venue takes are the currencies its instruments are filed under: their base
 * and settlement currencies, which are also the currencies it keeps balances in.
 */
import type { InstrumentSpec } from './instrument.ts';

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

/** The currencies an instrument is filed under: its base currency, then its settlement currency. */
export function instrumentCurrencies(
  spec: Pick<InstrumentSpec, 'baseCurrency' | 'settlementCurrency'>,
): string[] {
  return currenciesOf(spec.baseCurrency, spec.settlementCurrency);
}

/** True when a filter (case-insensitive symbol or `any`) matches an instrument. */
export function matchesInstrument(
  filter: string,
  spec: Pick<InstrumentSpec, 'baseCurrency' | 'settlementCurrency'>,
): boolean {
  const wanted = currencyFilter(filter);
  return wanted === 'ANY' || wanted === spec.baseCurrency || wanted === spec.settlementCurrency;
}

/** The currency filters a venue with these instruments takes (sorted, each once). */
export function venueCurrencies(
  specs: Iterable<Pick<InstrumentSpec, 'baseCurrency' | 'settlementCurrency'>>,
): string[] {
  const out = new Set<string>();
  for (const spec of specs) for (const currency of instrumentCurrencies(spec)) out.add(currency);
  return [...out].sort();
}

const PAIR = /^([A-Z0-9]+)(?:_([A-Z0-9]+))?(?:-|$)/;

/**
 * The currencies an instrument is filed under, from its name alone (for stored rows, whose
 * instrument may be long gone): the base coin, and the quote of a `BASE_QUOTE` pair prefix
 * (`BTC_USDC`, `BTC_USDC-PERPETUAL`, `BTC_USDC-27DEC26-65000-C`, `BTC_USDC-CS-…`). The venue names
 * linear and spot products so, and their quote currency is their settlement currency; inverse
 * names (`BTC-…`) carry the coin only. Null for a name of no known form.
 */
export function nameCurrencies(instrumentName: string): string[] | null {
  const match = PAIR.exec(instrumentName);
  if (match === null) return null;
  return currenciesOf(match[1]!, match[2] ?? null);
}

/** The second currency a name is filed under (the quote of a linear or spot pair), or null. */
export function pairQuoteCurrency(instrumentName: string): string | null {
  return nameCurrencies(instrumentName)?.[1] ?? null;
}
