/** A unique or primary-key constraint refused the write (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  const code = (err as { code: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

// Network failures, PostgreSQL's connection-class and shutdown states, too many connections,
// a lock held too long, and our own tag for a failed connection attempt.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'SQLITE_BUSY',
  'DB_UNAVAILABLE',
]);

/** The database cannot be reached or cannot take the request now: the request may simply be retried. */
export function isUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  return UNAVAILABLE_CODES.has(String((err as { code: unknown }).code));
}
