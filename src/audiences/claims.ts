import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import { lockExclusive } from '../db/locks.js';
import type { Database, PagesTable } from '../db/types.js';
import { AppError, invalidField } from '../http/errors.js';
import { checkRules, MAX_SEGMENTS_PER_PAGE, type Rules } from './rules.js';

// What an audience's write claims before it is made: a segment's rules, a person of the tenant,
// a route key no other live audience of the page holds. Each is refused with a 4xx naming its field.

/**
 * A segment's stored rules and priority from a request: rules are checked past their schema, and
 * an audience is either a person's or a segment, never both; priority comes only with rules.
 */
export function segmentOf(rules: Rules | null, priority: number | null | undefined, personId: string | null) {
  if (rules === null) {
    if (priority !== undefined && priority !== null) throw invalidField('/priority', 'is only for a segment audience: send rules with it');
    return { rules: null, priority: null };
  }
  if (personId !== null) throw invalidField('/rules', "cannot go with personId: an audience is a person's or a segment, not both");
  checkRules(rules, '/rules');
  return { rules: JSON.stringify(rules), priority: priority ?? 0 };
}

/**
 * A page has at most MAX_SEGMENTS_PER_PAGE live segment audiences (issue 45): each is matched on
 * every uncached view of the page. A write that would make one more (a new segment, rules given
 * to another audience, a segment restored) is 409 at `pointer`. The page's segment writes take a
 * lock first (PostgreSQL), so two at once cannot both see room for the last one.
 */
export async function checkSegmentRoom(trx: Transaction<Database>, page: PagesTable, audienceId: string | null, pointer: string) {
  await lockExclusive(trx, `segments:${page.id}`);
  const { n } = await trx
    .selectFrom('audiences')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .where('archived_at', 'is', null)
    .where('rules', 'is not', null)
    .$if(audienceId !== null, (q) => q.where('id', '!=', audienceId as string))
    .executeTakeFirstOrThrow();
  if (Number(n) < MAX_SEGMENTS_PER_PAGE) return;
  const message = `would make more than ${MAX_SEGMENTS_PER_PAGE} live segment audiences on this page, the most a page may have: archive one first`;
  throw new AppError('conflict', `${pointer} ${message}`, [{ path: pointer, message }]);
}

export async function personOf(db: Kysely<Database>, tenantId: string, personId: string) {
  const person = await db
    .selectFrom('persons')
    .select(['name', 'domain'])
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!person) throw invalidField('/personId', 'is not a person of this tenant');
  return person;
}

const routeKeyTaken = (key: string) =>
  new AppError('conflict', `Another live audience of this page has personRouteKey "${key}"`, [
    { path: '/personRouteKey', message: 'is already the route key of another live audience of this page' },
  ]);

/**
 * Route keys are unique among a page's live audiences. Checked here for a clear answer; the
 * partial unique index `audiences_route_key_uq` is what holds under concurrent writers.
 */
export async function checkRouteKeyFree(db: Kysely<Database>, page: PagesTable, key: string, audienceId: string | null) {
  const holder = await db
    .selectFrom('audiences')
    .select('id')
    .where('page_id', '=', page.id)
    .where('person_route_key', '=', key)
    .where('archived_at', 'is', null)
    .$if(audienceId !== null, (q) => q.where('id', '!=', audienceId as string))
    .executeTakeFirst();
  if (holder) throw routeKeyTaken(key);
}

/**
 * A unique index refused the write: a concurrent request took the route key or the home page
 * between the check and the write (PostgreSQL only; SQLite's writes are serialized). PostgreSQL
 * names the index that refused.
 */
export function audienceConflict(err: unknown, routeKey: string | null): AppError | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const index = (err as { constraint?: unknown }).constraint;
  if (index === 'audiences_route_key_uq' && routeKey !== null) return routeKeyTaken(routeKey);
  if (index === 'audiences_home_page_uq') {
    return new AppError('conflict', 'A concurrent request changed the home page of this page; read the audiences again and retry', [
      { path: '/flags', message: 'was changed by a concurrent request' },
    ]);
  }
  return undefined;
}
