import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { AudiencesTable, Database } from '../db/types.js';
import { pageRowById } from '../pages/index.js';
import { after, now } from '../time.js';
import { computedName } from './names.js';
import { archiveAudience } from './archiving.js';

/**
 * What is left of a route key once its audience was erased: a digest tied to the page, enough to
 * answer its path with 410 Gone, not to read the key back.
 */
export function erasedRouteKey(pageId: string, key: string): string {
  return createHash('sha256').update(`${pageId}\n${key}`).digest('hex');
}

/**
 * The audiences made for a person who is being erased (those whose person it is) lose everything
 * written for or about them: the link to the person, every name, route key and override a client
 * set, and every version's content, context and agent failure reason (what a generator wrote
 * included). Versions still in flight are cancelled, so no generator writes to them afterwards.
 * They are marked erased (for good: never restored) and returned, to be archived by
 * `archiveErased` once their events are redacted.
 */
export async function eraseAudiencesOf(trx: Transaction<Database>, tenantId: string, personId: string): Promise<AudiencesTable[]> {
  const audiences = await trx
    .selectFrom('audiences')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('person_id', '=', personId)
    .execute();
  if (audiences.length === 0) return [];
  const at = now();
  for (const a of audiences) {
    const computed = computedName(a.number);
    await trx
      .updateTable('audiences')
      .set({
        person_id: null,
        custom_name: null,
        computed_name: computed,
        effective_name: computed,
        effective_name_lc: computed.toLowerCase(),
        person_route_key: null,
        erased_route_key: a.person_route_key === null ? null : erasedRouteKey(a.page_id, a.person_route_key),
        action_form_id_override: null,
        action_form_instructions_override: null,
        action_url_override: null,
        metadata_override: null,
        erased_at: at,
        updated_at: after(a.updated_at),
      })
      .where('id', '=', a.id)
      .execute();
  }
  const ids = audiences.map((a) => a.id);
  await trx
    .updateTable('audience_versions')
    .set({ status: 'cancelled', cancelled_at: at, agent_lease_until: null, agent_retry_at: null })
    .where('audience_id', 'in', ids)
    .where('status', 'in', ['draft', 'pending', 'queued', 'processing'])
    .execute();
  await trx
    .updateTable('audience_versions')
    .set({ content: null, supplementary_context: null, failure_reason: null, regeneration_key: null })
    .where('audience_id', 'in', ids)
    .execute();
  return trx.selectFrom('audiences').selectAll().where('id', 'in', ids).execute();
}

/** Archives the erased audiences that were live, each with its `audience.archived` (which names no one now). */
export async function archiveErased(trx: Transaction<Database>, audiences: readonly AudiencesTable[]): Promise<void> {
  for (const audience of audiences) {
    if (audience.archived_at !== null) continue;
    const page = await pageRowById(trx, audience.page_id);
    await archiveAudience(trx, page, audience);
  }
}
