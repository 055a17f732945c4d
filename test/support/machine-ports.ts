/**
 * A whole core machine (the engine plus sub-machines: portfolios, the RFQ desk) behind the
 * gateway's ports, for e2e tests: the real `Sequencer` on the given clock with an in-memory
 * journal, the venue read port, and the in-memory history fed by every committed batch.
 */
import { MemoryHistory } from '../../src/api/memory-history.ts';
import type { CommandPort, CommittedBatch, EventPort } from '../../src/api/ports.ts';
import { createVenueReadPort } from '../../src/api/venue-read-port.ts';
import type { VirtualClock } from '../../src/app/clock.ts';
import { Sequencer } from '../../src/app/sequencer.ts';
import type { CommandResult } from '../../src/core/events.ts';
import type { CoreMachine, MachineCommand, MachineResult } from '../../src/core/machine.ts';
import type { Venue } from '../../src/engine/venue.ts';

export type MachinePorts = CommandPort &
  EventPort & { readonly reads: ReturnType<typeof createVenueReadPort>; readonly history: MemoryHistory };

export function machinePorts(venue: Venue, machine: CoreMachine, clock: VirtualClock) {
  type Unstamped = Omit<MachineCommand, 'seq' | 'ts'>;
  const sequencer = new Sequencer<Unstamped, MachineResult>(
    (command, stamp) => machine.execute({ ...command, ...stamp } as MachineCommand),
    { append: async () => {} },
    clock,
    { seq: 0, ts: clock.now() },
  );
  const history = new MemoryHistory((name) => venue.instrument(name)?.instrument.kind);
  const listeners = new Set<(batch: CommittedBatch) => void>();
  sequencer.onCommitted((entry, result) => {
    const batch: CommittedBatch = {
      seq: entry.seq,
      ts: entry.ts,
      events: result.engineEvents,
      subEvents: result.subEvents,
    };
    history.record(batch);
    for (const listener of listeners) listener(batch);
  });
  /** Any machine command (a sub-machine's too), answered with the machine's whole result. */
  const submitMachine = (command: object) => sequencer.submit(command as Unstamped);
  const ports: MachinePorts = {
    reads: createVenueReadPort(venue),
    history,
    submit: async (command) => (await submitMachine(command)).result as CommandResult,
    now: () => sequencer.now(),
    onCommitted(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get sequence() {
      return sequencer.sequence;
    },
  };
  return { ports, submitMachine };
}
