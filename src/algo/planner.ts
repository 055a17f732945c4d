/**
 * What each algorithm wants, as pure arithmetic on lots (SEMANTICS, Portfolios). The machine
 * turns these numbers into child orders; nothing here touches the engine.
 *
 * - TWAP: N = ceil(duration / frequency) slices at start + k·frequency; slice k works
 *   floor(remaining / (N − k)) lots of each leg (shortfalls roll forward into later slices).
 * - BALANCE: tranche k of a leg ends at the cumulative target floor(amount·(k+1)/parts) (the last
 *   part's target is the whole amount). With a priority leg P, another leg i may fill at most
 *   floor(amount_i · filled_P / amount_P); without one, at most one tranche beyond the filled
 *   fraction of the slowest of the other legs (so a leg alone, or one behind the others, works
 *   its whole target: the unfilled rest of earlier parts rolls in). Hedge legs follow the slowest
 *   non-hedge leg's filled fraction.
 * Every allowance is capped by the part's cumulative target (hedges only by their amount).
 */

import { mulDivFloor } from '../engine/economics.ts';

export function twapSliceCount(durationMs: number, frequencyMs: number): number {
  return Math.max(1, Math.ceil(durationMs / frequencyMs));
}

/** Index of the latest slice due at `now` (-1 before the start), capped at the last slice. */
export function twapSliceAt(startAt: number, frequencyMs: number, sliceCount: number, now: number): number {
  if (now < startAt) return -1;
  return Math.min(sliceCount - 1, Math.floor((now - startAt) / frequencyMs));
}

/** Lots of slice k: the remaining amount spread over the slices left, rounded down to the lot. */
export function twapSliceAmount(remainingLots: number, sliceCount: number, sliceIndex: number): number {
  const slicesLeft = sliceCount - sliceIndex;
  if (remainingLots <= 0 || slicesLeft <= 0) return 0;
  return Math.floor(remainingLots / slicesLeft);
}

/** Cumulative lots of a leg due by the end of part k (0-based). */
export function balanceCumulativeTarget(amount: number, parts: number, part: number): number {
  if (part >= parts - 1) return amount;
  return Math.floor((amount * (part + 1)) / parts);
}

/** Lots of one tranche (rounded up so "one tranche ahead" never blocks a whole leg). */
export function balanceTranche(amount: number, parts: number): number {
  return Math.ceil(amount / parts);
}

export interface BalanceLegInput {
  readonly amount: number;
  readonly filled: number;
  readonly hedge: boolean;
  readonly priority: boolean;
}

/** Main legs (all legs when every one is a hedge) and the priority leg among them. */
function balanceRoles(legs: readonly BalanceLegInput[]) {
  const anyMain = legs.some((leg) => !leg.hedge);
  const isMain = (leg: BalanceLegInput) => !anyMain || !leg.hedge;
  return { isMain, priority: legs.find((leg) => leg.priority && isMain(leg)) };
}

/** Cumulative lots each leg may have filled now (its working order covers allowed − filled). */
export function balanceAllowances(legs: readonly BalanceLegInput[], parts: number, part: number): number[] {
  const { isMain, priority } = balanceRoles(legs);
  // The slowest filled fraction as lots over amount, kept exact: amount × (filled / amount) in
  // floats comes out just under a whole lot (22 × (15 / 22) = 14.999…) and floor lost that lot.
  const slowestOf = (except: BalanceLegInput | null) => {
    let slowest: BalanceLegInput | null = null;
    for (const leg of legs) {
      if (leg === except || !isMain(leg)) continue;
      if (slowest === null || leg.filled * slowest.amount < slowest.filled * leg.amount) slowest = leg;
    }
    return slowest;
  };
  const follow = (amount: number, slowest: { filled: number; amount: number }) =>
    mulDivFloor(amount, slowest.filled, slowest.amount);
  // The slowest main leg, and the slowest of the others for that leg itself: two passes, not one
  // per leg (a step evaluates every leg, so per-leg scans made it cubic in the legs).
  const slowest = slowestOf(null);
  const runnerUp = slowest === null ? null : slowestOf(slowest);
  const slowestMain = slowest ?? { filled: 1, amount: 1 };
  return legs.map((leg) => {
    if (!isMain(leg)) return Math.min(leg.amount, follow(leg.amount, slowestMain));
    const target = balanceCumulativeTarget(leg.amount, parts, part);
    if (priority === undefined) {
      const slowestOther = leg === slowest ? runnerUp : slowest;
      if (slowestOther === null) return target;
      return Math.min(target, follow(leg.amount, slowestOther) + balanceTranche(leg.amount, parts));
    }
    if (leg === priority) return target;
    return Math.min(target, follow(leg.amount, priority));
  });
}

/**
 * Whether a BALANCE part is done: its lead legs (the priority leg; without one every main leg)
 * reached their targets, and every other leg filled what it may. A follower's allowance can sit
 * below its own target when the lead's target was rounded down (a 10-lot option hedged with 100
 * perpetual lots in 3 parts: 3 option lots allow 30 hedge lots, not 33), and the part must not
 * wait out its time for lots nothing will send.
 */
export function balancePartReached(
  legs: readonly BalanceLegInput[],
  parts: number,
  part: number,
  targets: readonly number[],
): boolean {
  const { isMain, priority } = balanceRoles(legs);
  const allowed = balanceAllowances(legs, parts, part);
  return legs.every((leg, i) => {
    const leads = priority === undefined ? isMain(leg) : leg === priority;
    return leg.filled >= (leads ? targets[i]! : Math.min(targets[i]!, allowed[i]!));
  });
}
