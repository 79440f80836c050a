import { sql, type RawBuilder, type Transaction } from 'kysely';
import { containsAsciiFolded } from './search/index.js';
import type { Database } from './types.js';

// Shared by every owner whose rows a person's erasure (persons/erasure.ts) redacts.

/**
 * What erasure looks for: a person's values (and the ids of what was made for them), anywhere
 * inside a stored string, ignoring case, in every form a value is stored in: as typed, escaped
 * inside JSON, percent-encoded in an address to any depth (`%40`, `%20` or `+`, either case of hex,
 * every byte or a few, decoded to a fixed point). The verdict is JavaScript's (`toLowerCase`, full
 * Unicode), so it is the same on SQLite and PostgreSQL; SQL only narrows the rows to read
 * (`mayMention`), by the longest stretch of each value that both databases fold alike, or an
 * escape that could decode to part of it.
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

/** How many bytes of UTF-8 a lead byte starts, or 0 for a byte no character starts with. */
const utf8Length = (byte: number): number => (byte < 0x80 ? 1 : byte < 0xc2 ? 0 : byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : byte < 0xf5 ? 4 : 0);

/**
 * A run of percent escapes decoded by `decodeURIComponent` where it is valid UTF-8, one character
 * at a time where it is not: an escape that starts no valid character (a stray `%FF`) stays as it
 * is, and the characters around it are still decoded. Linear in the run.
 */
function decodeRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    const bytes = run.length / 3;
    let out = '';
    for (let i = 0; i < bytes; ) {
      const n = utf8Length(Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16));
      let decoded: string | undefined;
      if (n > 0 && i + n <= bytes) {
        try {
          decoded = decodeURIComponent(run.slice(i * 3, (i + n) * 3));
        } catch {
          // not a character: the lead escape stays as written
        }
      }
      out += decoded ?? run.slice(i * 3, i * 3 + 3);
      i += decoded === undefined ? 1 : n;
    }
    return out;
  }
}

/** One layer of percent-encoding removed, wherever it decodes (`+` is left to the readings). */
const decodeLayer = (text: string): string => text.replace(/(?:%[0-9a-f]{2})+/gi, decodeRun);

/**
 * Layers decoded at most: each layer removes at least two characters, so any stored text reaches
 * its fixed point well before; the bound only keeps a hostile text of `%252525…` linear.
 */
const MAX_LAYERS = 64;

/**
 * Every way an address may show a value: `text` lowercased, then decoded layer by layer until
 * nothing changes (an address fully percent-encoded, `%7A%65%6C…`, or inside an address inside an
 * address), each layer also with `+` read as a space (a form's encoding).
 */
function readings(text: string): string[] {
  const found = [text.toLowerCase()];
  let current = text;
  for (let layer = 0; layer < MAX_LAYERS && /%[0-9a-f]{2}/i.test(current); layer++) {
    const next = decodeLayer(current);
    if (next === current) break;
    found.push(next.toLowerCase());
    current = next;
  }
  for (const reading of [...found]) if (reading.includes('+')) found.push(reading.replace(/\+/g, ' '));
  return found;
}

/**
 * What SQL narrows by besides the stretches themselves: the escape of each of their characters
 * (lowercase hex, as `lower(column)` reads either case), `%25` (a deeper layer) and, where a stretch
 * holds a space, `%2b` (a `+` that reads as one). A text that decodes to a stretch without holding
 * it as written must hold one of these, so no row the check would find is left unread.
 */
function escapesOf(stretches: readonly string[]): string[] {
  const escapes = new Set(['%25']);
  for (const stretch of stretches) {
    for (const ch of stretch) escapes.add(`%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
    if (stretch.includes(' ')) escapes.add('%2b');
  }
  return [...escapes];
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
  const narrowing = [...stretches, ...escapesOf(stretches)];
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
        narrowing.map((s) => containsAsciiFolded(column, s)),
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
