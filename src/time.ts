/** Timestamps are ISO 8601 strings in UTC with milliseconds, made by the service, never by the database. */
export const now = (): string => new Date().toISOString();

/** A timestamp strictly after `previous`, so an update visibly moves `updatedAt` even within one millisecond. */
export function after(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}

// Year 0000 is RFC 3339's, not PostgreSQL's (it has no year 0): both databases take years 0001-9999.
export const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An RFC 3339 date-time (already format-checked) as the service stores instants: ISO 8601 in UTC
 * with milliseconds. Digits beyond the millisecond are dropped, or, with `roundUp` (for the
 * bounds of a range over stored millisecond instants), round up to the next millisecond, so that
 * `>= bound` and `< bound` select exactly what they would at full precision.
 * Undefined when the instant is not a date of years 0001-9999 in UTC.
 */
export function toInstant(value: string, roundUp = false): string | undefined {
  let ms = Date.parse(value);
  if (roundUp && /[.,]\d{3}\d*[1-9]/.test(value)) ms += 1;
  if (Number.isNaN(ms) || ms < EARLIEST || ms > LATEST) return undefined;
  return new Date(ms).toISOString();
}
