import { sql, type Transaction } from 'kysely';
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

/**
 * The next free slug for `base` within `scope`: `base`, then `base-2`, `base-3`, ... A counter per
 * base avoids scanning every earlier slug; the existence check covers a name that is itself
 * `base-2`. The caller's unique constraint stays the final guard.
 */
export async function allocateSlug(
  trx: Transaction<Database>,
  scope: string,
  base: string,
  taken: (slug: string) => Promise<boolean>,
): Promise<string> {
  for (;;) {
    const { last_n: n } = await trx
      .insertInto('slug_counters')
      .values({ scope, base, last_n: 1 })
      .onConflict((oc) => oc.columns(['scope', 'base']).doUpdateSet({ last_n: sql<number>`slug_counters.last_n + 1` }))
      .returning('last_n')
      .executeTakeFirstOrThrow();
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(await taken(candidate))) return candidate;
  }
}
