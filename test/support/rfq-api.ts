/**
 * Block RFQs through the API, for end-to-end tests: the real engine and RFQ desk inside the core
 * machine, the real sequencer on a virtual clock, the real gateway with the RFQ methods and
 * channels (maker desks MAKER1 and MAKER2 of the demo bootstrap), and two inverse BTC calls of
 * one expiry to quote spreads on.
 */
import assert from 'node:assert/strict';
import { registerRfqChannels, registerRfqMethods } from '../../src/api/methods/rfq.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { CoreMachine } from '../../src/core/machine.ts';
import type { SubResult } from '../../src/core/submachine.ts';
import { Venue } from '../../src/engine/venue.ts';
import { buildCatalogue } from '../../src/market/catalogue.ts';
import { RfqDesk } from '../../src/rfq/desk.ts';
import { marketOf } from '../../src/rfq/market.ts';
import type { RfqEvent, RfqValue } from '../../src/rfq/types.ts';
import { type Harness, startHarness } from './gateway-harness.ts';
import { machinePorts } from './machine-ports.ts';

export const RFQ_START = Date.UTC(2026, 10, 20, 12);

async function startRfqCore() {
  const venue = Venue.create();
  const desk = new RfqDesk(marketOf(venue));
  const machine = new CoreMachine(venue, new Map([['rfq', desk]]));
  const clock = new VirtualClock(RFQ_START);
  const { ports, submitMachine } = machinePorts(venue, machine, clock);
  for (const spec of buildCatalogue(RFQ_START, { BTC: 60_000, ETH: 3_000 })) {
    const result = await ports.submit({ type: 'list_instrument', spec });
    assert.ok(result.ok, `list ${spec.name}`);
  }
  const submitRfq = async (command: object) =>
    (await submitMachine(command)).result as SubResult<RfqValue, RfqEvent>;
  return { venue, desk, clock, ports, submitRfq };
}

export type RfqCore = Awaited<ReturnType<typeof startRfqCore>>;

export interface RfqApi {
  readonly core: RfqCore;
  readonly harness: Harness;
  /** Two inverse BTC calls of the last expiry, the lower strike first. */
  readonly call70: string;
  readonly call75: string;
}

export async function startRfqApi(): Promise<RfqApi> {
  const core = await startRfqCore();
  const harness = await startHarness({ venue: core.ports });
  registerRfqMethods(harness.gateway.methods, {
    submit: (command) => core.submitRfq(command),
    desk: core.desk,
    reads: core.ports.reads,
    makerDesks: () => ['MAKER1', 'MAKER2'],
    now: () => core.ports.now(),
  });
  registerRfqChannels(harness.gateway.channels, core.ports.reads);
  const calls = core.ports.reads
    .instruments(false)
    .filter((i) => i.kind === 'option' && i.spec.baseCurrency === 'BTC' && i.spec.optionType === 'call')
    .filter((i) => i.spec.marginKind === 'inverse');
  const expiry = calls[calls.length - 1]!.spec.expiration;
  const same = calls
    .filter((i) => i.spec.expiration === expiry)
    .sort((a, b) => Number(a.spec.strike) - Number(b.spec.strike));
  return { core, harness, call70: same[0]!.name, call75: same[1]!.name };
}
