import type { Transaction } from 'kysely';
import { refreshPersonAudiences } from '../audiences/index.js';
import { mentionsOf } from '../db/mentions.js';
import { allocateSlug, forgetSlugBasesWith, slugify } from '../db/slugs.js';
import type { Database, PersonsTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { after } from '../time.js';
import { toPerson } from './repository.js';

/** What only the erased person has: a name is not, since two people may share one. */
type Identifying = Pick<PersonsTable, 'email' | 'phone_number' | 'linkedin_profile_url'>;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `slug` holds `part` as whole words. */
const holdsWords = (slug: string, part: string) => `-${slug}-`.includes(`-${part}-`);

/**
 * A person's erasure (erasure.ts) reaches other persons too: a visitor may have typed the erased
 * person's address as their own name. Each value that identifies the erased person (email, phone,
 * LinkedIn URL) is cut out of another person's name wherever it is written as typed (the whole name
 * is blanked when it holds one only in an encoded form), and a field that holds one (their email,
 * phone or LinkedIn URL) is cleared. A person whose slug was made of such a value gets a new slug
 * from what their name now is, and the slug counters forget every base made of it.
 */
export async function forgetInOtherPersons(trx: Transaction<Database>, tenantId: string, erased: Identifying): Promise<void> {
  const values = [erased.email, erased.phone_number, erased.linkedin_profile_url].filter((v): v is string => !!v);
  if (values.length === 0) return;
  const mentions = mentionsOf(values);
  const slugParts = [...new Set(values.map((v) => slugify(v, '')).filter((part) => part !== ''))];
  const rows = await trx
    .selectFrom('persons')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        ...(['name', 'email', 'phone_number', 'linkedin_profile_url'] as const).map((c) => mentions.mayMention(c)),
        ...slugParts.map((part) => eb('slug', 'like', `%${part}%`)),
      ]),
    )
    .execute();
  const scope = `person:${tenantId}`;
  const cut = new RegExp(values.map(escapeRegExp).join('|'), 'gi');
  for (const row of rows) {
    const changes: Partial<PersonsTable> = {};
    if (mentions.test(row.name)) {
      const name = row.name.replace(cut, ' ').replace(/\s+/g, ' ').trim();
      changes.name = mentions.test(name) ? '' : name;
    }
    if (mentions.test(row.email)) changes.email = null;
    if (mentions.test(row.phone_number)) changes.phone_number = null;
    if (mentions.test(row.linkedin_profile_url)) changes.linkedin_profile_url = null;
    const base = slugify(changes.name ?? row.name, 'person');
    const baseHolds = slugParts.some((part) => holdsWords(base, part));
    // A slug holding the value is made anew, unless the person's own name (untouched) makes it:
    // a slug that holds none is kept, as a change of name keeps it.
    const slugHolds = slugParts.some((part) => holdsWords(row.slug, part)) && (changes.name !== undefined || !baseHolds);
    if (slugHolds) {
      changes.slug = await allocateSlug(trx, scope, baseHolds ? 'person' : base, async (s) => {
        const user = await trx
          .selectFrom('persons')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('slug', '=', s)
          .executeTakeFirst();
        return user !== undefined;
      });
    }
    if (Object.keys(changes).length === 0) continue;
    const updated = await trx
      .updateTable('persons')
      .set({ ...changes, updated_at: after(row.updated_at) })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (changes.name !== undefined) await refreshPersonAudiences(trx, tenantId, row.id, { name: updated.name, domain: updated.domain });
    await emit(trx, tenantId, 'person.updated', toPerson(updated));
  }
  for (const part of slugParts) await forgetSlugBasesWith(trx, scope, part);
}
