import type { Transaction } from 'kysely';
import { applySessionChange } from './rollups.js';
import type { Mentions } from '../db/mentions.js';
import { SESSION_COLUMNS, type SessionColumn } from '../db/session-columns.js';
import type { Database } from '../db/types.js';

type TextColumn = 'analytics_session_id' | 'page_title' | 'page_url' | SessionColumn<'form'> | SessionColumn<'utm'>;

/** A form's fields go together: one of them naming the person makes the others theirs too. */
const FORM: readonly TextColumn[] = SESSION_COLUMNS.form;
/** Written by a visitor or a client, each on its own. */
const OTHERS: readonly TextColumn[] = ['analytics_session_id', 'page_title', 'page_url', ...SESSION_COLUMNS.utm];
/**
 * What a visit to a page made for the person showed of them (its address holds their route key).
 * Its form stays unless it mentions them: someone else may have filled it in.
 */
const OF_THEIR_PAGE: readonly TextColumn[] = ['page_title', 'page_url'];

/**
 * A person's erasure (persons/erasure.ts): visits keep their counts (analytics) and lose every text that mentions the person: a form's
 * fields together, any other field on its own ('' where it was). Visits of the audiences made for
 * them also lose their title and address. A UTM value that changes moves the visit between
 * rollup rows, so no rollup keeps the old value either.
 */
export async function forgetSessions(
  trx: Transaction<Database>,
  tenantId: string,
  mentions: Mentions,
  erasedAudienceIds: readonly string[],
): Promise<void> {
  const rows = await trx
    .selectFrom('audience_sessions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        ...[...FORM, ...OTHERS].map((c) => mentions.mayMention(c)),
        ...(erasedAudienceIds.length > 0 ? [eb('audience_id', 'in', erasedAudienceIds)] : []),
      ]),
    )
    .execute();
  const erased = new Set(erasedAudienceIds);
  for (const row of rows) {
    const blank = new Set<TextColumn>();
    if (erased.has(row.audience_id)) for (const c of OF_THEIR_PAGE) blank.add(c);
    if (FORM.some((c) => mentions.test(row[c]))) for (const c of FORM) blank.add(c);
    for (const c of OTHERS) if (mentions.test(row[c])) blank.add(c);
    const changes: Partial<Record<TextColumn, string>> = {};
    for (const c of blank) if (row[c] !== '') changes[c] = '';
    // The visitor key of a visit on their audience is their person id (src/site/measure/classify.ts).
    const forgetVisitor = erased.has(row.audience_id) && row.visitor_hash.startsWith('person:');
    if (Object.keys(changes).length === 0 && !forgetVisitor) continue;
    await trx
      .updateTable('audience_sessions')
      .set({ ...changes, ...(forgetVisitor ? { visitor_hash: 'erased' } : {}) })
      .where('id', '=', row.id)
      .execute();
    await applySessionChange(trx, row, { ...row, ...changes });
  }
}
