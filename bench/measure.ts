/** Small measuring helpers the benches share. */
import { readFileSync } from 'node:fs';

/** The p-th percentile (0–100) of ascending values; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** CPU seconds (user + system) a process, or only its main thread, has used so far, from /proc (Linux); NaN elsewhere. */
export function processCpuSeconds(pid: number, mainThreadOnly = false): number {
  try {
    const path = mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}
