/**
 * Compile-time checks of the typed clients (the suite's type check runs over this file): a
 * misspelled method or an ill-typed parameter is refused by the compiler. Each
 * `@ts-expect-error` fails the type check if its line ever compiles.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HttpClient } from './http-client.ts';
import type { WsClient } from './ws-client.ts';

/** Never called: only compiled. */
async function misuses(http: HttpClient, ws: WsClient): Promise<void> {
  // @ts-expect-error a method the service does not have
  await http.call('private/buyy', { instrumentName: 'BTC-PERPETUAL' });
  // @ts-expect-error a method the service does not have
  await ws.call('public/tickr', { instrumentName: 'BTC-PERPETUAL' });
  // @ts-expect-error instrumentName is a string
  await http.call('private/buy', { instrumentName: 42, quantity: '1' });
  // @ts-expect-error instrumentName is required
  await http.call('private/sell', { quantity: '1' });
  // @ts-expect-error depth is a number
  await ws.call('public/get_order_book', { instrumentName: 'BTC-PERPETUAL', depth: '5' });
  // @ts-expect-error no such parameter
  await http.call('private/get_account_summary', { currency: 'BTC', bogus: 1 });
  // @ts-expect-error mode is reject_taker or cancel_maker
  await http.call('private/set_self_trading_config', { mode: 'cancel_taker' });
  // @ts-expect-error mode is required
  await ws.call('private/set_self_trading_config', { extendedToSubaccounts: false });
  const summary = await http.call('private/get_account_summary', { currency: 'BTC' });
  // @ts-expect-error balances are decimal strings
  const balance: number = summary.balance;
  void balance;
}

const LEG = {
  instrument: 'BTC-PERPETUAL',
  instrumentType: 'PERPETUAL',
  side: 1,
  quantity: '100',
  priceOptions: { priceType: 'LIMIT', price: 60000 },
} as const;

/** Never called: only compiled. The portfolio calls are typed from the server's schemas. */
async function portfolioMisuses(http: HttpClient): Promise<void> {
  const twapTrade = { durationSec: 10, frequencySec: 2 };
  // @ts-expect-error accountId misspelled
  await http.submitPortfolio({ acountId: 1, portfolioType: 'TWAP', twapTrade, legs: [LEG] });
  // @ts-expect-error no such portfolioType
  await http.submitPortfolio({ accountId: 1, portfolioType: 'TWAPP', twapTrade, legs: [LEG] });
  // @ts-expect-error a TWAP body without its twapTrade
  await http.submitPortfolio({ accountId: 1, portfolioType: 'TWAP', legs: [LEG] });
  // @ts-expect-error a COMMON body has no twapTrade
  await http.submitPortfolio({ accountId: 1, portfolioType: 'COMMON', twapTrade, legs: [LEG] });
  // @ts-expect-error side is 1 (buy) or 2 (sell)
  await http.submitPortfolio({ accountId: 1, portfolioType: 'COMMON', legs: [{ ...LEG, side: 'buy' }] });
  // @ts-expect-error a BALANCE price is a decimal string
  await http.submitPortfolio({
    accountId: 1,
    portfolioType: 'BALANCE',
    balanceTrade: { parts: 2, eachLimitMs: 1_000, totalLimitMs: 0, totalEndAction: 1 },
    legs: [LEG],
  });
  // @ts-expect-error portfolioId misspelled
  await http.cancelPortfolio({ portfolioID: 7 });
  // @ts-expect-error accountId is required
  await http.cancelAllPortfolios({ portfolioType: 'TWAP' });
  // @ts-expect-error the id is a number
  await http.portfolioInfo('7');
  const info = await http.portfolioInfo(7);
  // @ts-expect-error quantities are decimal strings
  const quantity: number = info.legs[0]!.quantity;
  void quantity;
  // What compiles: a TWAP body as spec 2.1 shapes it.
  const { portfolioId } = await http.submitPortfolio({
    accountId: 1,
    portfolioType: 'TWAP',
    twapTrade,
    legs: [LEG],
  });
  await http.cancelPortfolio({ portfolioId });
}

test('the clients refuse misspelled methods and ill-typed params at compile time', () => {
  assert.equal(typeof misuses, 'function');
  assert.equal(typeof portfolioMisuses, 'function');
});
