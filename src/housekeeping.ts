import { forgetPastSecrets } from './db/daily-secrets.js';
import { pruneIdempotencyKeys } from './http/idempotency.js';
import type { MaintenanceTasks } from './jobs/index.js';
import { pruneExperienceViews } from './onsite/index.js';
import { pruneFormClaims } from './site/index.js';
import { pruneEvents } from './webhooks/index.js';

/**
 * What housekeeping (jobs/maintenance.ts) does each round, in order: each task is the pruning
 * function of its table's owner (src/db/owners.ts), listed here above every area, as app.ts is.
 */
export const HOUSEKEEPING: MaintenanceTasks = {
  // Events older than 30 days (docs/webhooks.md), their deliveries first.
  'prune events': pruneEvents,
  'prune idempotency keys': pruneIdempotencyKeys,
  'prune form claims': pruneFormClaims,
  // Yesterday's visitor keys can no longer be recomputed, so never linked to today's (db/daily-secrets.ts).
  'forget past daily secrets': forgetPastSecrets,
  // The customer's site's page views and units of two days ago (src/onsite/measure/store.ts).
  'prune experience views': pruneExperienceViews,
};
