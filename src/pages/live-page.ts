import type { Kysely } from 'kysely';
import type { Database, PagesTable } from '../db/types.js';
import { notFound } from '../http/errors.js';
import { findPage } from './repository.js';

/** The tenant's live page a request names, or the API's 404 for it. */
export async function livePage(db: Kysely<Database>, tenantId: string, pageId: string): Promise<PagesTable> {
  const page = await findPage(db, tenantId, pageId);
  if (!page) throw notFound('Page');
  return page;
}
