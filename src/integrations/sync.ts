import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { IntegrationsConfig } from '../config.js';
import { claimLeases, type LeaseChanges, releaseLease } from '../db/lease.js';
import { consume } from '../events/index.js';
import type { Database, IntegrationsTable } from '../db/types.js';
import { upsertDeal } from '../deals/index.js';
import { AppError } from '../http/errors.js';
import { roundLoop } from '../jobs/index.js';
import { now } from '../time.js';
import type { CrmDriver } from './driver.js';
import { hubspotDriver } from './hubspot.js';
import { CrmError, type Sleep } from './http.js';
import { leadsToPush } from './leads.js';
import { holdLease, LEASE_MS, type SyncHold } from './hold.js';
import { dueAfterSync, leadsArrived, pauseRefused, recordDealsRead, recordPushed, saveProgress } from './repository.js';
import { salesforceDriver } from './salesforce.js';
import type { Sealer } from './secrets.js';

/**
 * The CRM sync, in the background of every process: each round claims the integrations whose
 * sync is due with a short lease (db/lease.ts) that the holder renews while it lives (hold.ts), so
 * one instance syncs an integration at a time however long the CRM takes, and a holder killed
 * mid-sync leaves a lease that ends within seconds; the next holder resumes from the cursor saved
 * after each page. A sync pushes the leads not yet pushed, then reads the deals changed since the
 * cursor. Its outcome lands on the integration (`lastError`, or `lastSyncAt`) and in the metrics;
 * a CRM refusing the credentials pauses it and emits `integration.failed`. Nothing here throws
 * out of a round.
 */
export interface CrmSync {
  start(): void;
  /** A sync was asked for: look now. */
  wake(): void;
  stop(): Promise<void>;
}

export type SyncOutcome = 'succeeded' | 'failed' | 'refused';

export interface CrmSyncOptions {
  /** How often new leads and due integrations are looked for (10 s by default); tests shorten it. */
  pollMs?: number;
  /** How a retry waits; tests pass a shorter sleep. */
  sleep?: Sleep;
  /**
   * false: this process does not run the outbox's `crm` consumer, so a lead waits for the next
   * sync due (tests that count the requests of a sync they ask for; another process may run it).
   */
  consumeLeads?: boolean;
  onOutcome?: (provider: IntegrationsTable['provider'], outcome: SyncOutcome) => void;
}

const CLAIM = 4;
/**
 * Events read a batch, and batches at most a round: most are no lead's and are passed by (the
 * handler looks at their types), so a round keeps up with 2,000 events a second at its 10 s poll.
 */
const EVENTS_BATCH = 1000;
const EVENT_BATCHES_PER_ROUND = 20;
const LEAD_BATCH = 100;
const LEAD_BATCHES_PER_SYNC = 10;
const DEAL_PAGES_PER_SYNC = 50;
const LEASE_LOST = new Error('the sync lease was lost');

export function createCrmSync(
  db: Kysely<Database>,
  config: IntegrationsConfig,
  sealer: Sealer,
  log: FastifyBaseLogger,
  options: CrmSyncOptions = {},
): CrmSync {
  const driverFor = (row: IntegrationsTable, signal: AbortSignal): CrmDriver => {
    const credentials = sealer.open(row.id, row.secrets);
    if (!credentials)
      throw new CrmError('the stored credentials cannot be read (INTEGRATIONS_SECRET changed?): send them again', undefined, true);
    if (row.provider === 'hubspot') return hubspotDriver(config.hubspotApiUrl, credentials.accessToken ?? '', options.sleep, signal);
    return salesforceDriver(
      {
        loginUrl: config.salesforceLoginUrl,
        instanceUrl: row.instance_url ?? '',
        apiVersion: config.salesforceApiVersion,
        clientId: credentials.clientId ?? '',
        clientSecret: credentials.clientSecret ?? '',
      },
      options.sleep,
      signal,
    );
  };

  /** Pushes and reads within the bounds of one sync; true when work was left for the next. */
  async function work(row: IntegrationsTable, hold: SyncHold): Promise<boolean> {
    const driver = driverFor(row, hold.signal);
    let more = false;
    for (let batch = 0; batch < LEAD_BATCHES_PER_SYNC; batch++) {
      const leads = await leadsToPush(db, row.tenant_id, row.id, LEAD_BATCH);
      if (leads.length === 0) break;
      const pushed = await driver.pushLeads(leads);
      if (!(await hold.guard((held) => recordPushed(db, held, row.tenant_id, pushed)))) return false;
      if (leads.length < LEAD_BATCH) break;
      if (batch === LEAD_BATCHES_PER_SYNC - 1) more = true;
    }
    let pages = 0;
    let lost = false;
    await driver.readDeals(row.deal_cursor, async (deals, cursor) => {
      const written = await hold.guard((held) =>
        db
          .transaction()
          .execute(async (trx) => {
            const read: string[] = [];
            for (const deal of deals) {
              try {
                await upsertDeal(trx, row.tenant_id, deal);
                read.push(deal.externalId);
              } catch (err) {
                // A deal the API would refuse (its dates, say) is skipped, not the whole page.
                if (!(err instanceof AppError)) throw err;
                log.warn({ integrationId: row.id, externalId: deal.externalId, err: err.message }, 'crm deal skipped');
              }
            }
            const added = await recordDealsRead(trx, row.tenant_id, row.id, read);
            const synced = row.deals_synced + added;
            // The lease lost: nothing of the page stays, and the next holder reads it again.
            if (!(await saveProgress(trx, held, { deal_cursor: cursor, deals_synced: synced }))) throw LEASE_LOST;
            row.deals_synced = synced;
            return true;
          })
          .catch((err: unknown) => {
            if (err === LEASE_LOST) return false;
            throw err;
          }),
      );
      if (!written) {
        lost = true;
        return false;
      }
      pages++;
      if (pages >= DEAL_PAGES_PER_SYNC) {
        more = true;
        return false;
      }
      return true;
    });
    return more && !lost;
  }

  async function syncOne(row: IntegrationsTable): Promise<void> {
    const until = row.sync_lease_until;
    if (until === null) return;
    const hold = holdLease(db, row.id, until);
    const end = async (next: string, changes: LeaseChanges<'integrations'>) =>
      releaseLease(
        db,
        { table: 'integrations', lease: 'sync_lease_until', ...(await hold.end()) },
        {
          ...changes,
          sync_due_at: dueAfterSync(row.sync_due_at, next),
        },
      );
    try {
      let more: boolean;
      try {
        more = await work(row, hold);
      } finally {
        await hold.end();
      }
      const at = now();
      const next = more ? at : new Date(Date.now() + config.syncSeconds * 1000).toISOString();
      await end(next, { last_sync_at: at, last_error: null, last_error_at: null });
      options.onOutcome?.(row.provider, 'succeeded');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof CrmError && err.refused) {
        await pauseRefused(db, await hold.end(), message);
        log.warn({ integrationId: row.id, reason: message }, 'integration.failed');
        options.onOutcome?.(row.provider, 'refused');
        return;
      }
      const at = now();
      const next = new Date(Date.now() + config.syncSeconds * 1000).toISOString();
      await end(next, { last_error: message.slice(0, 1000), last_error_at: at });
      log.warn({ integrationId: row.id, err: message }, 'crm sync failed');
      options.onOutcome?.(row.provider, 'failed');
    }
  }

  async function round(): Promise<void> {
    // The outbox's `crm` consumer first: a new lead makes its tenant's integrations due now.
    for (let batch = 0; options.consumeLeads !== false && batch < EVENT_BATCHES_PER_ROUND; batch++) {
      if ((await consume(db, 'crm', leadsArrived, EVENTS_BATCH)) < EVENTS_BATCH) break;
    }
    const at = now();
    const claimed = await claimLeases(db, {
      table: 'integrations',
      lease: 'sync_lease_until',
      due: (eb) => eb.and([eb('status', '=', 'active'), eb('sync_due_at', '<=', at)]),
      orderBy: 'sync_due_at',
      limit: CLAIM,
      now: at,
      until: new Date(Date.now() + LEASE_MS).toISOString(),
    });
    await Promise.all(
      claimed.map((row) => syncOne(row).catch((err: unknown) => log.error({ err, integrationId: row.id }, 'crm sync failed to record'))),
    );
  }

  const rounds = roundLoop({
    round,
    pollMs: options.pollMs ?? 10_000,
    minGapMs: 50,
    onError: (err) => log.error({ err }, 'crm sync round failed'),
    unref: true,
  });
  return { start: rounds.start, wake: rounds.wake, stop: rounds.stop };
}
