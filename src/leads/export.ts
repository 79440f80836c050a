import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/types.js';
import { type LeadFilters, matchingLeads, toLead, withDetails } from './repository.js';
import { Lead } from './schemas.js';

/** The header row: the lead's fields, in the resource's order. */
export const CSV_COLUMNS = Object.keys(Lead.properties);

/** Rows read per query: enough to amortise a query, few enough to keep memory flat. */
const BATCH = 500;

/** The matching leads, newest first like the list, in keyset batches read as the consumer pulls. */
async function* allLeads(db: Kysely<Database>, tenantId: string, filters: LeadFilters) {
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const cursor = after;
    const rows = await withDetails(matchingLeads(db, tenantId, filters))
      .$call((q) => (cursor === undefined ? q : q.where(sql<boolean>`(leads.created_at, leads.id) < (${cursor.at}, ${cursor.id})`)))
      .orderBy('leads.created_at', 'desc')
      .orderBy('leads.id', 'desc')
      .limit(BATCH)
      .execute();
    for (const row of rows) yield toLead(row);
    const last = rows[rows.length - 1];
    if (rows.length < BATCH || !last) return;
    after = { at: last.created_at, id: last.id };
  }
}

/** OWASP's list of characters that make a spreadsheet read a cell as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;
const defuse = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);

/** The leads as CSV, as the sessions' export writes it (src/visits/export.ts): RFC 4180, no formula cells. */
export function leadsCsv(db: Kysely<Database>, tenantId: string, filters: LeadFilters): Readable {
  const csv = stringify({
    header: true,
    columns: CSV_COLUMNS,
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
    cast: { string: defuse },
  });
  const source = Readable.from(allLeads(db, tenantId, filters));
  source.on('error', (error) => csv.destroy(error));
  return source.pipe(csv);
}
