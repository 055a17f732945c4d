/** The book channel follows the price band, which moves with the marks (commands without events). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { startTestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';

interface Band {
  readonly minPrice: string | null;
  readonly maxPrice: string | null;
}

test('a book with no order activity is pushed again when its price band moves, as the direct read shows it', async () => {
  const running = await startTestService({ config: { simulator: false } });
  try {
    running.clock.advance(1_000);
    const client = running.ws(0);
    await client.connect();
    const pushes: SubscriptionPush[] = [];
    await client.subscribe([`book.${PERP}`], (push) => pushes.push(push));
    await until(() => pushes.length === 1);
    const first = pushes[0]!.data as Band;
    const direct = async () =>
      (await running.http(1).call('public/get_order_book', { instrumentName: PERP })) as Band;
    // The index walks; the marks, and with them the band, follow within a few ticks.
    let moved = false;
    for (let step = 0; step < 120 && !moved; step++) {
      running.clock.advance(1_000);
      const now = await direct();
      moved = now.minPrice !== first.minPrice;
    }
    assert.ok(moved, 'the band moved');
    await until(() => {
      const last = pushes[pushes.length - 1]!.data as Band;
      return last.minPrice !== first.minPrice;
    });
    // Once the market is left alone, the last push shows the band the direct read shows.
    const settled = await direct();
    await until(() => {
      const last = pushes[pushes.length - 1]!.data as Band;
      return last.minPrice === settled.minPrice && last.maxPrice === settled.maxPrice;
    });
    await client.close();
  } finally {
    await running.close();
  }
});
