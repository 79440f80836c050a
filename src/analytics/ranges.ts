import { invalidField } from '../http/errors.js';
import { EARLIEST, toInstant } from '../time.js';
import { daysBefore } from './buckets.js';
import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS } from './schemas.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** A half-open span of instants, in milliseconds: [start, end). */
export interface Span {
  start: number;
  end: number;
}

const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;

/**
 * Splits [start, end) into the whole `unit`s inside it (UTC hours or days, which a rollup serves)
 * and the parts at its edges that are less than a unit (which a finer source must serve).
 */
export function splitSpan(span: Span, unit: number): { whole: Span | undefined; edges: Span[] } {
  const inner = { start: ceilTo(span.start, unit), end: floorTo(span.end, unit) };
  if (inner.start >= inner.end) return { whole: undefined, edges: span.start < span.end ? [span] : [] };
  const edges = [
    { start: span.start, end: inner.start },
    { start: inner.end, end: span.end },
  ].filter((e) => e.start < e.end);
  return { whole: inner, edges };
}

/** Spans in order with the touching ones joined, so fewer reads cover them. */
export function joinSpans(spans: readonly Span[]): Span[] {
  const joined: Span[] = [];
  for (const s of spans) {
    const last = joined[joined.length - 1];
    if (last && last.end === s.start) last.end = s.end;
    else joined.push({ ...s });
  }
  return joined;
}

function parse(value: string, path: string): number {
  const iso = toInstant(value, true);
  if (iso === undefined) throw invalidField(path, 'is not a date-time of years 0001-9999 in UTC');
  return Date.parse(iso);
}

/**
 * The range of a query: given bounds (rounded up past milliseconds, as the sessions list does), or
 * by default the 30 local days before `defaultEnd`. At most 400 days (of 24 hours) apart; start
 * after end is a 400 too, start equal to end an empty range.
 */
export function resolveRange(query: { startDate?: string; endDate?: string }, defaultEnd: number, zone: string): Span {
  const end = query.endDate === undefined ? defaultEnd : parse(query.endDate, '/endDate');
  // A default start never falls before the first instant a database takes.
  const start =
    query.startDate === undefined ? Math.max(EARLIEST, daysBefore(end, DEFAULT_RANGE_DAYS, zone)) : parse(query.startDate, '/startDate');
  if (start > end) throw invalidField('/startDate', 'is after endDate');
  if (end - start > MAX_RANGE_DAYS * DAY_MS) {
    throw invalidField(query.endDate === undefined ? '/startDate' : '/endDate', `makes a range of more than ${MAX_RANGE_DAYS} days`);
  }
  return { start, end };
}
