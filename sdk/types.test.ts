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
  const summary = await http.call('private/get_account_summary', { currency: 'BTC' });
  // @ts-expect-error balances are decimal strings
  const balance: number = summary.balance;
  void balance;
}

test('the clients refuse misspelled methods and ill-typed params at compile time', () => {
  assert.equal(typeof misuses, 'function');
});
