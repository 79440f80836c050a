import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { type Kysely, sql } from 'kysely';
import type { Database, PagesTable } from '../db/types.js';
import { type SessionFilters, toSession } from './repository.js';
import { AudienceSession } from './schemas.js';

/** The header row: the session's fields as the reference spells them, in its order. */
export const CSV_COLUMNS = Object.keys(AudienceSession.properties);

/** Rows read per query: enough to amortise a query, few enough to keep memory flat. */
const BATCH = 500;

/**
 * The matching sessions, newest first like the list, read in keyset batches: the next batch is
 * read only when the consumer asks for more, so memory stays flat however many rows match.
 */
async function* matchingSessions(db: Kysely<Database>, page: PagesTable, filters: SessionFilters) {
  let after: { startedAt: string; id: string } | undefined;
  for (;;) {
    const cursor = after;
    const rows = await db
      .selectFrom('audience_sessions')
      .selectAll()
      .where('page_id', '=', page.id)
      .where('tenant_id', '=', page.tenant_id)
      .$call((q) => (filters.audienceId === undefined ? q : q.where('audience_id', '=', filters.audienceId)))
      .$call((q) => (filters.start === undefined ? q : q.where('session_started_at', '>=', filters.start)))
      .$call((q) => (filters.end === undefined ? q : q.where('session_started_at', '<', filters.end)))
      // A row comparison, as the list's cursor: both databases walk the page's index from there.
      .$call((q) => (cursor === undefined ? q : q.where(sql<boolean>`(session_started_at, id) < (${cursor.startedAt}, ${cursor.id})`)))
      .orderBy('session_started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(BATCH)
      .execute();
    for (const row of rows) yield toSession(row);
    const last = rows[rows.length - 1];
    if (rows.length < BATCH || !last) return;
    after = { startedAt: last.session_started_at, id: last.id };
  }
}

/** OWASP's list of characters that make a spreadsheet read a cell as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;
const defuse = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);

/**
 * The sessions as CSV (RFC 4180: CRLF line ends, fields with a comma, a quote or a line break
 * quoted, quotes doubled), with no cell a spreadsheet would run as a formula. A stream that pulls
 * from the database only as fast as the client reads.
 */
export function sessionsCsv(db: Kysely<Database>, page: PagesTable, filters: SessionFilters): Readable {
  const csv = stringify({
    header: true,
    columns: CSV_COLUMNS,
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
    cast: { string: defuse, boolean: (v) => String(v) },
  });
  const source = Readable.from(matchingSessions(db, page, filters));
  source.on('error', (error) => csv.destroy(error));
  return source.pipe(csv);
}
