import type { Database } from '../db/types.js';

/**
 * Every table whose rows `erasePerson` updates or deletes (src/persons/erasure.ts and what it
 * calls): on PostgreSQL each keeps the old row versions as dead tuples until vacuumed.
 * docs/privacy.md's recipe is `vacuumRecipe()`, word for word; test/persons/erasure-reach.test.ts
 * checks both that and that an erasure rewrites no table missing here.
 */
export const ERASURE_TABLES = [
  'persons',
  'person_logs',
  'leads',
  'audiences',
  'audience_versions',
  'audience_sessions',
  'visit_events',
  'analytics_hours_utm',
  'analytics_days',
  'analytics_site_hours',
  'analytics_site_days',
  'events',
  'idempotency_keys',
  'webhook_deliveries',
  'slug_counters',
  'search_postings',
] as const satisfies readonly (keyof Database)[];

/** The statement that reclaims erased rows' old versions at once on PostgreSQL. */
export function vacuumRecipe(): string {
  return `VACUUM (VERBOSE) ${ERASURE_TABLES.join(', ')};`;
}
