import { type Kysely, sql } from 'kysely';
import { isPostgres } from './adapter.js';
import { prepared } from './prepared.js';
import type { Database } from './types.js';

/** Lowercase ASCII words joined by `-`: accents are dropped (`José` → `jose`), other characters split words. */
export function slugify(name: string, fallback: string, maxLength = 80): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '');
  return slug || fallback;
}

const nextSlugNumber = prepared((db, p: { scope: string; base: string }) =>
  db
    .insertInto('slug_counters')
    .values({ scope: p.scope, base: p.base, last_n: 1 })
    .onConflict((oc) => oc.columns(['scope', 'base']).doUpdateSet({ last_n: sql<number>`slug_counters.last_n + 1` }))
    .returning('last_n'),
);

/**
 * The next free slug for `base` within `scope`: `base`, then `base-2`, `base-3`, ... A counter per
 * base avoids scanning every earlier slug; the existence check covers a name that is itself
 * `base-2`. The caller's unique constraint stays the final guard.
 */
export async function allocateSlug(
  trx: Kysely<Database>,
  scope: string,
  base: string,
  taken: (slug: string) => Promise<boolean>,
): Promise<string> {
  for (;;) {
    const [{ last_n: n }] = (await nextSlugNumber(trx, { scope, base })) as [{ last_n: number }];
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(await taken(candidate))) return candidate;
  }
}

/**
 * A slug taken ahead of the transaction that uses it, on PostgreSQL: the counter's row is then
 * locked for one statement, not until the create commits, so a burst of creates of one name (each
 * waiting its turn on that row) no longer queues past the query timeout. A number taken by a create
 * that then fails is skipped, as a sequence's is. On SQLite, where write transactions run one at a
 * time anyway, nothing is taken ahead (undefined): the create allocates in its own transaction.
 */
export async function reserveSlug(
  db: Kysely<Database>,
  scope: string,
  base: string,
  taken: (slug: string) => Promise<boolean>,
): Promise<string | undefined> {
  return isPostgres(db) ? allocateSlug(db, scope, base, taken) : undefined;
}

/** The slug base `base` is forgotten in `scope` (no one uses it any more); allocation still checks for a free slug. */
export async function forgetSlugBase(trx: Kysely<Database>, scope: string, base: string): Promise<void> {
  await trx.deleteFrom('slug_counters').where('scope', '=', scope).where('base', '=', base).execute();
}

/**
 * Every slug base of `scope` holding `part` as whole words (`yara-example-com` in
 * `contact-yara-example-com`) is forgotten: what an erasure does once no one's slug is made of an
 * erased value any more. Allocation still checks for a free slug.
 */
export async function forgetSlugBasesWith(trx: Kysely<Database>, scope: string, part: string): Promise<void> {
  // A slug base holds only a-z, 0-9 and '-': nothing in it is a LIKE wildcard.
  await trx
    .deleteFrom('slug_counters')
    .where('scope', '=', scope)
    .where((eb) =>
      eb.or([eb('base', '=', part), eb('base', 'like', `${part}-%`), eb('base', 'like', `%-${part}`), eb('base', 'like', `%-${part}-%`)]),
    )
    .execute();
}
