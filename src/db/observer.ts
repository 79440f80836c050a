/** What the metrics learn from the database layer (src/metrics/database.ts); every member optional. */
export interface DbObserver {
  /** A statement ran: its SQL, how long it took in seconds, and whether it failed. */
  query?(sql: string, seconds: number, failed: boolean): void;
  /** SQLite: a group commit took this many transactions and statements together. */
  groupCommitted?(members: number): void;
}
