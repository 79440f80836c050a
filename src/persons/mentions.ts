import { sql, type RawBuilder } from 'kysely';
import { containsAsciiFolded } from '../db/search/index.js';

/**
 * What erasure looks for: a person's values (and the ids of what was made for them), anywhere
 * inside a stored string, ignoring case. The verdict is JavaScript's (`toLowerCase`, full
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
  for (const [run] of needle.matchAll(FOLDS_ALIKE)) if (run.length > longest.length) longest = run;
  return longest;
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
      const lower = text.toLowerCase();
      return whole.has(lower) || needles.some((n) => lower.includes(n));
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
