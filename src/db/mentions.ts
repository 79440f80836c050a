import { sql, type RawBuilder, type Transaction } from 'kysely';
import { containsAsciiFolded } from './search/index.js';
import type { Database } from './types.js';

// Shared by every owner whose rows a person's erasure (persons/erasure.ts) redacts.

/**
 * What erasure looks for: a person's values (and the ids of what was made for them), anywhere
 * inside a stored string, ignoring case, in every form a value is stored in: as typed, escaped
 * inside JSON, percent-encoded in an address (`%40`, `%20` or `+`, either case of hex). The verdict is JavaScript's (`toLowerCase`, full
 * Unicode), so it is the same on SQLite and PostgreSQL; SQL only narrows the rows to read
 * (`mayMention`), by the longest stretch of each value that both databases fold alike.
 */
export interface Mentions {
  /** Whether `text` mentions one of the values, ignoring case. */
  test(text: string | null | undefined): boolean;
  /** SQL true for every row whose `column` may mention one (a superset of `test`). */
  mayMention(column: string): RawBuilder<boolean>;
}

/**
 * Below this length a value (a two-letter name) would be found inside most stored text: it counts
 * only as a whole value (a whole column, or a whole JSON string).
 */
const SHORTEST_ANYWHERE = 3;

/**
 * Lowercase ASCII that can only come from itself or its capital: `i` and `k` are left out,
 * since `İ` and the Kelvin sign lowercase to them in JavaScript while SQLite's lower() keeps them.
 */
const FOLDS_ALIKE = /[\0-hjl-\x7f]+/g;

/** The longest stretch of `needle` that a `lower(column) LIKE` finds wherever JavaScript does. */
function likeStretch(needle: string): string {
  let longest = '';
  // An escape's hex digits may be stored in either case, of a character in either case: not a stretch.
  for (const [run] of needle.replace(/%[0-9a-f]{2}/g, '\u0100').matchAll(FOLDS_ALIKE)) if (run.length > longest.length) longest = run;
  return longest;
}

/** Each run of percent escapes decoded where it is valid UTF-8, and `+` as a space: how an address shows a value. */
function percentDecoded(text: string): string {
  return text.replace(/\+/g, ' ').replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** `text` lowercased, and (when it holds escapes) decoded once and twice (an address inside an address) too. */
function readings(text: string): string[] {
  const lower = text.toLowerCase();
  if (!/%[0-9a-f]{2}|\+/i.test(text)) return [lower];
  const once = percentDecoded(text);
  return [lower, once.toLowerCase(), percentDecoded(once).toLowerCase()];
}

export function mentionsOf(values: readonly (string | null | undefined)[]): Mentions {
  const anywhere = new Set<string>();
  const whole = new Set<string>();
  for (const value of values) {
    if (!value) continue;
    const lower = value.toLowerCase();
    // Inside stored JSON a value appears escaped (quotes, backslashes, control characters).
    const escaped = JSON.stringify(lower).slice(1, -1);
    if ([...value].length >= SHORTEST_ANYWHERE) {
      anywhere.add(lower);
      anywhere.add(escaped);
      // Not a verdict (`test` decodes what it reads) but what SQL narrows by: the stretches of an address.
      const encoded = encodeURIComponent(lower).toLowerCase();
      anywhere.add(encoded);
      anywhere.add(encoded.replaceAll('%20', '+'));
    } else {
      whole.add(lower);
      anywhere.add(`"${escaped}"`);
    }
  }
  const needles = [...anywhere];
  const stretches = [...new Set([...needles, ...whole].map(likeStretch))];
  return {
    test(text) {
      if (!text) return false;
      return readings(text).some((lower) => whole.has(lower) || needles.some((n) => lower.includes(n)));
    },
    mayMention(column) {
      if (stretches.length === 0) return sql<boolean>`1 = 0`;
      // A value with no such stretch could be anywhere: every row is read and tested.
      if (stretches.includes('')) return sql<boolean>`1 = 1`;
      return sql<boolean>`(${sql.join(
        stretches.map((s) => containsAsciiFolded(column, s)),
        sql` or `,
      )})`;
    },
  };
}

const BATCH = 500;

/**
 * The ids of `table`'s rows of the tenant whose `column` mentions the person: read in batches in
 * id order, narrowed by SQL and decided by `mentions.test`.
 */
export async function mentioning(
  trx: Transaction<Database>,
  table: 'events' | 'webhook_deliveries',
  column: 'payload' | 'last_error',
  tenantId: string,
  mentions: Mentions,
): Promise<string[]> {
  const found: string[] = [];
  let last = '';
  for (;;) {
    const rows = await trx
      .selectFrom(table)
      .select(['id', sql<string | null>`${sql.ref(column)}`.as('text')])
      .where('tenant_id', '=', tenantId)
      .where('id', '>', last)
      .where(mentions.mayMention(column))
      .orderBy('id')
      .limit(BATCH)
      .execute();
    for (const row of rows) if (mentions.test(row.text)) found.push(row.id);
    const end = rows.at(-1);
    if (!end || rows.length < BATCH) return found;
    last = end.id;
  }
}
