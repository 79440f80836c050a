import type { Transaction } from 'kysely';
import type { Database } from '../db/types.js';

/** `Jane Doe (acme.com)` for a linked person (the name alone without a domain), else `Audience <n>`. */
export function computedName(number: number, person?: { name: string; domain: string | null }): string {
  if (!person) return `Audience ${number}`;
  return person.domain ? `${person.name} (${person.domain})` : person.name;
}

/**
 * A person's name or domain changed: the audiences linked to them carry it in their computed (and,
 * without a custom name, effective) name, which search indexes, so they are rewritten in the same transaction.
 */
export async function refreshPersonAudiences(
  trx: Transaction<Database>,
  tenantId: string,
  personId: string,
  person: { name: string; domain: string | null },
): Promise<void> {
  const name = computedName(0, person);
  const base = trx.updateTable('audiences').where('tenant_id', '=', tenantId).where('person_id', '=', personId);
  await base.set({ computed_name: name }).where('custom_name', 'is not', null).execute();
  await base
    .set({ computed_name: name, effective_name: name, effective_name_lc: name.toLowerCase() })
    .where('custom_name', 'is', null)
    .execute();
}
