/** The deterministic command stream of the journal crash test (writer and checker agree on it). */
export function crashTestCommand(seq: number): { type: string; n: number; label: string } {
  return { type: 'place_order', n: (seq * 7919) % 100_003, label: `c${seq % 97}` };
}
