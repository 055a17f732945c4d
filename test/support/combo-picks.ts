/** Combos the end-to-end tests trade, picked from the live catalogue through the API. */
import type { HttpClient } from '../../sdk/http-client.ts';

/** A call spread of the first expiry listed with calls: its two lowest strikes, the lower bought. */
export async function callSpread(
  client: HttpClient,
): Promise<{ combo: string; long: string; short: string }> {
  const calls = (await client.call('public/get_instruments', { currency: 'BTC', kind: 'option' }))
    .map((instrument) => instrument.instrumentName)
    .filter((name) => /^BTC-\w+-\d+-C$/.test(name));
  const expiry = calls[0]!.split('-')[1]!;
  const strikes = calls
    .filter((name) => name.split('-')[1] === expiry)
    .map((name) => Number(name.split('-')[2]))
    .sort((a, b) => a - b);
  const [low, high] = [strikes[0]!, strikes[1]!];
  return {
    combo: `BTC-CS-${expiry}-${low}_${high}`,
    long: `BTC-${expiry}-${low}-C`,
    short: `BTC-${expiry}-${high}-C`,
  };
}
