import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { resolveActions, type StoredAction } from './actions.js';
import { findPage } from './repository.js';
import type { Content, PagePreviewDraft } from './schemas.js';
import { checkContent } from './sections.js';

/** Content and actions not stored, shown in their place by a preview (src/site/preview.ts). */
export interface PreviewDraft {
  /** Absent: the stored content of the audience (or page) shown. */
  content?: Content;
  actions: StoredAction[];
  headerActionId: string | null;
}

/**
 * Unsaved content and actions, checked by the rules a PATCH of the page applies (each layout's
 * fields, the tenant's live image assets, a cta naming one of the actions), at the same pointers;
 * nothing is written. Undefined: no such page. The header action stays while the draft's actions
 * keep it, and is dropped (not refused) when they do not: a preview has no `headerActionId` to fix.
 */
export async function checkedDraft(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  draft: PagePreviewDraft,
): Promise<PreviewDraft | undefined> {
  const page = await findPage(db, tenantId, pageId);
  if (!page) return undefined;
  const { actions } = resolveActions(JSON.parse(page.actions) as StoredAction[], null, draft.actions, null);
  if (draft.content)
    await checkContent(
      db,
      tenantId,
      draft.content,
      actions.map((a) => a.actionId),
    );
  const kept = page.header_action_id !== null && actions.some((a) => a.actionId === page.header_action_id);
  return { ...(draft.content ? { content: draft.content } : {}), actions, headerActionId: kept ? page.header_action_id : null };
}
