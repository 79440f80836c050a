import type { PageCopies } from '../pages/repository.js';

/** What an audience keeps of its page, kept in step as the page changes (pages/repository.ts calls these). */
export const pageCopies: PageCopies = {
  async renamed(trx, pageId, name) {
    await trx.updateTable('audiences').set({ page_name: name, page_name_lc: name.toLowerCase() }).where('page_id', '=', pageId).execute();
  },
  async deleted(trx, pageId) {
    await trx.updateTable('audiences').set({ page_deleted: 1 }).where('page_id', '=', pageId).execute();
  },
};
