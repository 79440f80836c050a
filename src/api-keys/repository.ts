import type { Kysely } from 'kysely';
import { toApiKey } from '../admin/repository.js';
import type { Database } from '../db/types.js';
import type { CallerKey } from './schemas.js';

export async function getCallerKey(db: Kysely<Database>, tenantId: string, apiKeyId: string): Promise<CallerKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', apiKeyId).where('tenant_id', '=', tenantId).executeTakeFirst();
  return row && { tenantId, apiKey: toApiKey(row) };
}
