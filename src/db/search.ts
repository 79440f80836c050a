import { sql, type RawBuilder } from 'kysely';

/**
 * `column LIKE '%text%'`, with the text's own `%`, `_` and `\` taken literally on both dialects.
 * Columns searched this way hold lowercased copies, and `text` must be lowercased too.
 */
export function contains(column: string, text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, '\\$&')}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
