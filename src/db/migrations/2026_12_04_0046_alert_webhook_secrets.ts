import { type Kysely, sql } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Issue 45: a Slack alert's webhook URL is a secret. `webhook_url_sealed` holds it encrypted (as
 * the CRM credentials are), `webhook_url_shown` the masked form the API returns, filled here for
 * the alerts that exist. The key lives outside the database (INTEGRATIONS_SECRET, or a file beside
 * SQLite's), so sealing the stored plain URLs is done at start by the service
 * (alerts/repository.ts, sealStoredWebhookUrls), which then empties `webhook_url`. `test_sent_at`:
 * when the last test message was asked for (one a minute per alert).
 */

/** Frozen copy of src/alerts/webhook-url.ts as of this migration. */
function masked(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '…';
  }
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  const last = segments[segments.length - 1] ?? '';
  const shown = last.slice(last.length - Math.min(4, Math.floor(last.length / 2)));
  const [first, team] = segments;
  if (segments.length === 4 && first === 'services' && team !== undefined)
    return `${parsed.origin}/services/${team.slice(0, 1)}…/…/${shown}`;
  return `${parsed.origin}/…/${shown}`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts } = columnTypes(db);
  await db.schema.alterTable('alerts').addColumn('webhook_url_sealed', 'text').execute();
  await db.schema
    .alterTable('alerts')
    .addColumn('webhook_url_shown', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('alerts').addColumn('test_sent_at', ts).execute();
  const { rows } = await sql<{ id: string; webhook_url: string }>`select id, webhook_url from alerts`.execute(db);
  for (const row of rows) {
    await sql`update alerts set webhook_url_shown = ${masked(row.webhook_url)} where id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alerts').dropColumn('test_sent_at').execute();
  await db.schema.alterTable('alerts').dropColumn('webhook_url_shown').execute();
  await db.schema.alterTable('alerts').dropColumn('webhook_url_sealed').execute();
}
