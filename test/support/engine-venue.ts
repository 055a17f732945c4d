/**
 * The real engine behind the gateway's ports, for e2e tests: a `Venue` (src/engine) driven by the
 * real `Sequencer` (src/app) with an in-memory journal, the `createVenueReadPort` adapter and the
 * in-memory history. Instruments come from the market catalogue; marks are set so price bands
 * and margins work.
 */
import { MemoryHistory } from '../../src/api/memory-history.ts';
import type { CommandPort, CommittedBatch, EventPort, ReadPort } from '../../src/api/ports.ts';
import { createVenueReadPort } from '../../src/api/venue-read-port.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { type AppendOnlyJournal, Sequencer } from '../../src/app/sequencer.ts';
import type { CoreCommand, UnstampedCommand } from '../../src/core/commands.ts';
import type { CommandResult } from '../../src/core/events.ts';
import type { EngineConfig } from '../../src/engine/config.ts';
import { Venue } from '../../src/engine/venue.ts';
import { buildCatalogue } from '../../src/market/catalogue.ts';

export interface EngineVenue extends CommandPort, EventPort {
  readonly reads: ReadPort;
  readonly history: MemoryHistory;
  readonly venue: Venue;
  readonly clock: VirtualClock;
}

export async function startEngineVenue(
  start = Date.UTC(2026, 10, 20, 12),
  config: Partial<EngineConfig> = {},
  /** The journal's append (default: durable at once); a test can hold commands back with it. */
  append: AppendOnlyJournal<UnstampedCommand>['append'] = async () => {},
): Promise<EngineVenue> {
  const venue = Venue.create(config);
  const clock = new VirtualClock(start);
  const journal = { append };
  const sequencer = new Sequencer<UnstampedCommand, CommandResult>(
    (command, stamp) => venue.execute({ ...command, ...stamp } as CoreCommand),
    journal,
    clock,
    { seq: 0, ts: start },
  );
  const history = new MemoryHistory((name) => venue.instrument(name)?.instrument.kind);
  const listeners = new Set<(batch: CommittedBatch) => void>();
  sequencer.onCommitted((entry, result) => {
    const batch: CommittedBatch = { seq: entry.seq, ts: entry.ts, events: result.events };
    history.record(batch);
    for (const listener of listeners) listener(batch);
  });
  const port: EngineVenue = {
    venue,
    clock,
    history,
    reads: createVenueReadPort(venue),
    submit: (command) => sequencer.submit(command),
    now: () => sequencer.now(),
    onCommitted(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get sequence() {
      return sequencer.sequence;
    },
  };
  for (const spec of buildCatalogue(start, { BTC: 60_000, ETH: 3_000 })) {
    const result = await port.submit({ type: 'list_instrument', spec });
    if (!result.ok) throw new Error(`listing ${spec.name}: ${result.error.message}`);
  }
  await port.submit({
    type: 'update_prices',
    indexPrices: [
      { currency: 'BTC', price: 60_000 },
      { currency: 'ETH', price: 3_000 },
    ],
    markPrices: [
      {
        instrumentName: 'BTC-PERPETUAL',
        markPrice: venue.instrument('BTC-PERPETUAL')!.instrument.parsePrice('60000'),
      },
    ],
  });
  return port;
}
