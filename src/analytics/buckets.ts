import { DateTime, IANAZone } from 'luxon';
import { CACHES, newCache } from '../db/caches.js';
import type { Interval } from './schemas.js';

/**
 * Calendar arithmetic in a time zone, by Luxon over the platform's Intl time-zone data (no zone
 * table of our own): where local midnights and hours fall, daylight-saving changes included.
 */

const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

/** An IANA time-zone name the platform knows (`Europe/Berlin`, `UTC`, `Etc/GMT+5`); offsets like `+01:00` are not names. */
export function isTimeZone(name: string): boolean {
  if (!ZONE_NAME.test(name)) return false;
  let known = zoneNames.get(name);
  if (known === undefined) {
    // Luxon answers by building an Intl.DateTimeFormat: a tenth of a request's time, and memory outside the heap.
    known = IANAZone.isValidZone(name);
    zoneNames.set(name, known);
  }
  return known;
}
const zoneNames = newCache<boolean>(CACHES.timeZones);

const UNIT: Record<Interval, 'hour' | 'day' | 'week'> = { hour: 'hour', day: 'day', week: 'week' };

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** UTC, the default and most asked-for zone, is plain arithmetic (1970-01-01 was a Thursday). */
const isUtc = (zone: string) => zone === 'UTC';
const UTC_SIZE: Record<Interval, number> = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS };
const UTC_ORIGIN: Record<Interval, number> = { hour: 0, day: 0, week: -3 * DAY_MS };

/** The first instant of the bucket holding `ms`: the local hour, the local midnight, or Monday's local midnight. */
export function bucketStart(ms: number, interval: Interval, zone: string): number {
  if (isUtc(zone)) {
    const size = UTC_SIZE[interval];
    const origin = UTC_ORIGIN[interval];
    return Math.floor((ms - origin) / size) * size + origin;
  }
  return DateTime.fromMillis(ms, { zone }).startOf(UNIT[interval]).toMillis();
}

/**
 * The start of the bucket after the one starting at `start`. Days and weeks go by the calendar
 * (a day is 23 or 25 hours across a change); hours go by the clock, so a repeated local hour is
 * two buckets and a skipped one none.
 */
export function nextBucket(start: number, interval: Interval, zone: string): number {
  if (isUtc(zone)) return start + UTC_SIZE[interval];
  const at = DateTime.fromMillis(start, { zone });
  if (interval === 'hour') {
    // In zones whose changes are not whole hours, the next local whole hour may be nearer than 60 minutes.
    const next = at.plus({ hours: 1 }).startOf('hour').toMillis();
    return next > start ? next : at.plus({ hours: 1 }).toMillis();
  }
  return at
    .plus(interval === 'day' ? { days: 1 } : { weeks: 1 })
    .startOf(UNIT[interval])
    .toMillis();
}

/**
 * The bucket bounds covering [start, end): `b[0] <= start < b[1] < ... < b[n-1] < end <= b[n]`, so
 * bucket i is [b[i], b[i+1]). Empty for an empty range. Undefined once more than `max` buckets.
 */
export function bucketBounds(start: number, end: number, interval: Interval, zone: string, max: number): number[] | undefined {
  if (start >= end) return [];
  const bounds = [bucketStart(start, interval, zone)];
  let last = bounds[0] ?? start;
  while (last < end) {
    if (bounds.length > max) return undefined;
    last = nextBucket(last, interval, zone);
    bounds.push(last);
  }
  return bounds;
}

/** The end of "the last 30 days": the start of the bucket after the one now is in (days and weeks: tomorrow's local midnight). */
export function defaultEnd(nowMs: number, interval: Interval, zone: string): number {
  const unit = interval === 'hour' ? 'hour' : 'day';
  return nextBucket(bucketStart(nowMs, unit, zone), unit, zone);
}

/** `days` local calendar days before `end`. */
export function daysBefore(end: number, days: number, zone: string): number {
  return DateTime.fromMillis(end, { zone }).minus({ days }).toMillis();
}
