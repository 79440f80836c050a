import type { Transaction } from 'kysely';
import type { Database } from '../db/types.js';
import type { PageCopies } from '../pages/index.js';

/**
 * Audiences a statement rewrites at most: a page may have tens of thousands, and on PostgreSQL each
 * rewritten row also moves its search postings, so one statement for all would outlast the query
 * timeout. Chunks keep each under it; the caller's transaction still makes them one change.
 */
export const COPY_BATCH = 1000;

/** Runs `chunk` (an update of at most COPY_BATCH rows still to change) until it changes fewer. */
async function inChunks(chunk: () => Promise<{ numUpdatedRows: bigint }>): Promise<void> {
  while (Number((await chunk()).numUpdatedRows) === COPY_BATCH);
}

/**
 * What an audience keeps of its page, kept in step as the page changes (pages/repository.ts calls
 * it): whether the page is deleted. Its name is not copied: audience search reads it from the page
 * (audiences/search.ts), so a rename writes one row (issue 50).
 */
export const pageCopies: PageCopies = {
  async deleted(trx, pageId) {
    await inChunks(() =>
      trx
        .updateTable('audiences')
        .set({ page_deleted: 1 })
        .where('id', 'in', ofPage(trx, pageId).where('page_deleted', '=', 0))
        .executeTakeFirst(),
    );
  },
};

const ofPage = (trx: Transaction<Database>, pageId: string) =>
  trx.selectFrom('audiences').select('id').where('page_id', '=', pageId).limit(COPY_BATCH);
