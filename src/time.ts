/** Timestamps are ISO 8601 strings in UTC with milliseconds, made by the service, never by the database. */
export const now = (): string => new Date().toISOString();

/** A timestamp strictly after `previous`, so an update visibly moves `updatedAt` even within one millisecond. */
export function after(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}
