/**
 * Wakeups of the active portfolios: a binary min-heap on (time, portfolio id) with lazy deletion.
 * `schedule(id, at)` supersedes the portfolio's previous entry (its stale entries are skipped when
 * they reach the top), so rescheduling is O(log n) and the next wakeup is O(1) amortised.
 *
 * Derived state only: the machine rebuilds it from the portfolios on restore, and processing
 * order never depends on heap order (due portfolios are handled in id order).
 */
export class WakeupQueue {
  private readonly times: number[] = [];
  private readonly ids: number[] = [];
  /** The live wakeup per portfolio; heap entries that disagree are stale. */
  private readonly current = new Map<number, number>();

  clear(): void {
    this.times.length = 0;
    this.ids.length = 0;
    this.current.clear();
  }

  /** Sets (or with null removes) a portfolio's wakeup. */
  schedule(id: number, at: number | null): void {
    if (at === null) {
      this.current.delete(id);
      return;
    }
    if (this.current.get(id) === at) return;
    this.current.set(id, at);
    this.push(at, id);
  }

  /** Earliest live wakeup, or null. */
  peek(): number | null {
    this.dropStale();
    return this.times.length === 0 ? null : this.times[0]!;
  }

  /** Removes and returns the ids of every live wakeup at or before `ts`. */
  takeDue(ts: number): number[] {
    const due: number[] = [];
    for (;;) {
      this.dropStale();
      if (this.times.length === 0 || this.times[0]! > ts) return due;
      const id = this.ids[0]!;
      this.pop();
      this.current.delete(id);
      due.push(id);
    }
  }

  private dropStale(): void {
    while (this.times.length > 0 && this.current.get(this.ids[0]!) !== this.times[0]) this.pop();
  }

  private less(i: number, j: number): boolean {
    const a = this.times[i]!;
    const b = this.times[j]!;
    return a < b || (a === b && this.ids[i]! < this.ids[j]!);
  }

  private swap(i: number, j: number): void {
    [this.times[i], this.times[j]] = [this.times[j]!, this.times[i]!];
    [this.ids[i], this.ids[j]] = [this.ids[j]!, this.ids[i]!];
  }

  private push(at: number, id: number): void {
    this.times.push(at);
    this.ids.push(id);
    let i = this.times.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private pop(): void {
    const last = this.times.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.ids.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.times.length && this.less(left, smallest)) smallest = left;
      if (right < this.times.length && this.less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
