/**
 * The expiry calendar: every dated instrument expires at 08:00 UTC.
 *
 * - daily:     the next `daily` calendar days;
 * - weekly:    the next `weekly` Fridays;
 * - monthly:   the next `monthly` last Fridays of a month;
 * - quarterly: the next `quarterly` last Fridays of March, June, September and December.
 *
 * "Next" means strictly after `now`, so at 08:00:00.000 on an expiry day that expiry is gone
 * and the next one of its kind appears: listing and expiring happen at the same instant.
 * An expiry that falls in several kinds takes the longest one as its settlement period
 * (quarter > month > week > day), as Deribit labels them.
 */
import type { SettlementPeriod } from '../domain/instrument.ts';

export interface ExpiryCalendarConfig {
  readonly daily: number;
  readonly weekly: number;
  readonly monthly: number;
  readonly quarterly: number;
}

export const DEFAULT_EXPIRY_CALENDAR: ExpiryCalendarConfig = {
  daily: 3,
  weekly: 3,
  monthly: 3,
  quarterly: 3,
};

export interface ListedExpiry {
  readonly expiration: number;
  readonly period: Exclude<SettlementPeriod, 'perpetual'>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const EXPIRY_HOUR = 8;
const FRIDAY = 5;
const PERIOD_RANK = { day: 0, week: 1, month: 2, quarter: 3 } as const;

function expiryOn(year: number, month: number, day: number): number {
  return Date.UTC(year, month, day, EXPIRY_HOUR);
}

/** Last Friday of a month, at 08:00 UTC. */
export function lastFridayOfMonth(year: number, month: number): number {
  const lastDay = new Date(Date.UTC(year, month + 1, 0));
  const back = (lastDay.getUTCDay() - FRIDAY + 7) % 7;
  return expiryOn(year, month, lastDay.getUTCDate() - back);
}

/** The first 08:00 UTC strictly after `now`. */
function nextDailyExpiry(now: number): number {
  const date = new Date(now);
  const today = expiryOn(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return today > now ? today : today + DAY_MS;
}

export function listedExpiries(
  now: number,
  config: ExpiryCalendarConfig = DEFAULT_EXPIRY_CALENDAR,
): ListedExpiry[] {
  const periods = new Map<number, ListedExpiry['period']>();
  const add = (expiration: number, period: ListedExpiry['period']): void => {
    const existing = periods.get(expiration);
    if (existing === undefined || PERIOD_RANK[period] > PERIOD_RANK[existing])
      periods.set(expiration, period);
  };
  const firstDaily = nextDailyExpiry(now);
  for (let i = 0; i < config.daily; i++) add(firstDaily + i * DAY_MS, 'day');
  let friday = firstDaily;
  while (new Date(friday).getUTCDay() !== FRIDAY) friday += DAY_MS;
  for (let i = 0; i < config.weekly; i++) add(friday + i * 7 * DAY_MS, 'week');
  const start = new Date(now);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth();
  let monthlies = 0;
  let quarterlies = 0;
  // Walk months forward until both counts are met (quarterlies can be a few years out).
  for (
    let guard = 0;
    guard < 240 && (monthlies < config.monthly || quarterlies < config.quarterly);
    guard++
  ) {
    const expiration = lastFridayOfMonth(year, month);
    if (expiration > now) {
      if (monthlies < config.monthly) {
        add(expiration, 'month');
        monthlies++;
      }
      if (month % 3 === 2 && quarterlies < config.quarterly) {
        add(expiration, 'quarter');
        quarterlies++;
      }
    }
    month++;
    if (month === 12) {
      month = 0;
      year++;
    }
  }
  return [...periods.entries()]
    .map(([expiration, period]) => ({ expiration, period }))
    .sort((a, b) => a.expiration - b.expiration);
}
