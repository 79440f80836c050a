import type { Kysely } from 'kysely';
import { findApiKey, toApiKey } from '../admin/index.js';
import type { Database } from '../db/types.js';
import type { CallerKey } from './schemas.js';

export async function getCallerKey(db: Kysely<Database>, tenantId: string, apiKeyId: string): Promise<CallerKey | undefined> {
  const row = await findApiKey(db, tenantId, apiKeyId);
  return row && { tenantId, apiKey: toApiKey(row) };
}
