import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { mayLeave, mayLeaveWhere } from '../events/index.js';

/**
 * The leads an integration has yet to send (a read model, src/db/owners.ts): the tenant's leads,
 * oldest first, with who filled them, their page and audience, and the account of their domain,
 * less those already pushed to this integration and those posted with `Sec-GPC: 1`, which never
 * leave the service. A lead without any email cannot be upserted by email and is left out.
 */
export interface LeadToPush {
  leadId: string;
  email: string;
  firstName: string;
  lastName: string;
  phone: string;
  company: string;
  pageName: string;
  audienceName: string;
  /** When the form was posted: a note or task about it says so. */
  submittedAt: string;
}

/** "Ada Lovelace" → Ada / Lovelace; one word is the last name (Salesforce requires one). */
export function splitName(name: string): { firstName: string; lastName: string } {
  const words = name.trim().split(/\s+/).filter(Boolean);
  if (words.length <= 1) return { firstName: '', lastName: words[0] ?? '' };
  return { firstName: words.slice(0, -1).join(' '), lastName: words[words.length - 1] as string };
}

export async function leadsToPush(db: Kysely<Database>, tenantId: string, integrationId: string, limit: number): Promise<LeadToPush[]> {
  const rows = await db
    .selectFrom('leads as l')
    .innerJoin('persons as per', (j) => j.onRef('per.id', '=', 'l.person_id').onRef('per.tenant_id', '=', 'l.tenant_id'))
    .leftJoin('pages as pg', (j) => j.onRef('pg.id', '=', 'l.page_id').onRef('pg.tenant_id', '=', 'l.tenant_id'))
    .leftJoin('audiences as au', (j) => j.onRef('au.id', '=', 'l.audience_id').onRef('au.tenant_id', '=', 'l.tenant_id'))
    .leftJoin('accounts as ac', (j) => j.onRef('ac.domain_lc', '=', 'per.domain_lc').onRef('ac.tenant_id', '=', 'per.tenant_id'))
    .select([
      'l.id',
      'l.created_at',
      'l.submitted_name',
      'l.submitted_email',
      'l.submitted_phone',
      'per.name as person_name',
      'per.email as person_email',
      'per.phone_number as person_phone',
      'per.domain as person_domain',
      'pg.name as page_name',
      'au.effective_name as audience_name',
      'ac.name as account_name',
      'l.gpc',
    ])
    .where('l.tenant_id', '=', tenantId)
    // The one exit rule (events/may-leave.ts), read in SQL so a kept lead never blocks the batch.
    .where((eb) => mayLeaveWhere(eb, 'l.gpc'))
    .where((eb) => eb.or([eb('l.submitted_email', '!=', ''), eb('per.email', 'is not', null)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('integration_leads as il')
            .select('il.lead_id')
            .where('il.integration_id', '=', integrationId)
            .whereRef('il.lead_id', '=', 'l.id'),
        ),
      ),
    )
    .orderBy('l.created_at')
    .orderBy('l.id')
    .limit(limit)
    .execute();
  // One account per lead even when several share the domain: the first seen.
  const seen = new Map<string, LeadToPush>();
  for (const row of rows) {
    if (seen.has(row.id) || !mayLeave({ exit: 'crm.push', gpc: row.gpc })) continue;
    const name = row.submitted_name || row.person_name;
    seen.set(row.id, {
      leadId: row.id,
      email: row.submitted_email || (row.person_email ?? ''),
      ...splitName(name),
      phone: row.submitted_phone || (row.person_phone ?? ''),
      company: row.account_name ?? row.person_domain ?? '',
      pageName: row.page_name ?? '',
      audienceName: row.audience_name ?? '',
      submittedAt: row.created_at,
    });
  }
  return [...seen.values()];
}
