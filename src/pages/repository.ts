import { type ExpressionBuilder, type Kysely, type Transaction, sql } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { byTenantAndId, tenantAndIdIn, type TenantRowKey } from '../db/batch.js';
import { prepared, preparedByShape } from '../db/prepared.js';
import { bump, counter } from '../db/counters.js';
import { noteChange } from '../db/changes.js';
import type { Database, PagesTable } from '../db/types.js';
import { contentListQuery, keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { changeAndEmit, changeStatement, emit } from '../events/index.js';
import { after, now } from '../time.js';
import { deletePageLinksOf } from '../page-links/index.js';
import { resolveActions, type StoredAction } from './actions.js';
import { beginning, type TemplateStarts } from './from-template.js';
import type { FieldError } from '../http/errors.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import { checkContent, contentErrors } from './sections.js';
import { fullMetadata, mergeMetadata, parseMetadata, patchPageMetadata } from './metadata.js';
import { type Content, type Page, type PageCreate, type PageListQuery, type PageSummary, PageUpdate } from './schemas.js';
import type { OriginOf } from '../http/public-origin.js';

const actionIds = (actions: StoredAction[]) => actions.map((a) => a.actionId);

type PageRow = PagesTable & { audiences_count: number | string | bigint | null };

/** A page's content as shown: its own, or (never set) the default made from its current title. */
export const pageContent = (row: Pick<PagesTable, 'content' | 'title'>): Content =>
  row.content !== null ? (JSON.parse(row.content) as Content) : { headline: row.title, subheadline: '', sections: [] };

/** What lists read of a page (issue 45): every column but `content`, which may be 512 KB. */
const SUMMARY_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'title',
  'page_context',
  'page_type',
  'status',
  'flags',
  'brand_id',
  'header_action_id',
  'actions',
  'action_card_widgets',
  'footer_links',
  'scripts',
  'metadata',
  'archived_at',
  'deleted_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof PagesTable)[];
type SummaryRow = Pick<PagesTable, (typeof SUMMARY_COLUMNS)[number]> & Pick<PageRow, 'audiences_count'>;

export function toPageSummary(row: SummaryRow): PageSummary {
  const actions = JSON.parse(row.actions) as StoredAction[];
  const metadata = parseMetadata(row.metadata);
  return {
    pageId: row.id,
    name: row.name,
    title: row.title,
    pageContext: row.page_context,
    pageType: row.page_type,
    status: row.status,
    flags: JSON.parse(row.flags) as Page['flags'],
    brandId: row.brand_id,
    ...(row.header_action_id !== null ? { headerActionId: row.header_action_id } : {}),
    actions: actions.map((a, actionIndex) => ({ ...a, actionIndex })),
    actionCardWidgets: JSON.parse(row.action_card_widgets) as Page['actionCardWidgets'],
    footerLinks: JSON.parse(row.footer_links) as Page['footerLinks'],
    scripts: JSON.parse(row.scripts) as Page['scripts'],
    ...(metadata !== null ? { metadata: fullMetadata(metadata) } : {}),
    audiencesCount: Number(row.audiences_count ?? 0),
    archivedAt: row.archived_at,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const toPage = (row: PageRow): Page => ({ ...toPageSummary(row), content: pageContent(row) });

/** Audiences of the outer query's page that are not archived. */
const audiencesCount = (eb: ExpressionBuilder<Database, 'pages'>) =>
  eb
    .selectFrom('audiences')
    .select((a) => a.fn.countAll().as('n'))
    .whereRef('audiences.page_id', '=', 'pages.id')
    .where('audiences.archived_at', 'is', null)
    .as('audiences_count');

/** A live (not deleted) page of the tenant, as stored. */
export function findPage(db: Kysely<Database>, tenantId: string, pageId: string): Promise<PagesTable | undefined> {
  return readPage(db, { tenantId, id: pageId });
}

/**
 * A live page by id, which nearly every page-scoped request reads first: concurrent requests
 * share one statement on PostgreSQL (db/batch.ts), and it is compiled once on both.
 */
const readPage = byTenantAndId(
  prepared((db, p: TenantRowKey) =>
    db.selectFrom('pages').selectAll().where('id', '=', p.id).where('tenant_id', '=', p.tenantId).where('deleted_at', 'is', null),
  ),
  prepared((db, p: { tenantIds: string[]; ids: string[] }) =>
    db.selectFrom('pages').selectAll().where(tenantAndIdIn(p.tenantIds, p.ids)).where('deleted_at', 'is', null),
  ),
);

/** A live page of the tenant, as stored, with its audiences' count. */
async function findPageCounted(db: Kysely<Database>, tenantId: string, pageId: string, forUpdate = false): Promise<PageRow | undefined> {
  return (await pageCounted(db, forUpdate ? 'for update' : 'read', { tenantId, pageId }))[0];
}

const pageCounted = preparedByShape((db, p: { tenantId: string; pageId: string }, shape) => {
  const query = db
    .selectFrom('pages')
    .selectAll()
    .select(audiencesCount)
    .where('id', '=', p.pageId)
    .where('tenant_id', '=', p.tenantId)
    .where('deleted_at', 'is', null);
  return shape === 'for update' ? query.forUpdate('pages') : query;
});

export async function getPage(db: Kysely<Database>, tenantId: string, pageId: string): Promise<Page | undefined> {
  const row = await findPageCounted(db, tenantId, pageId);
  return row && toPage(row);
}

/**
 * `originOf` makes the URLs of the images the request names (pages/images.ts); `starts` finds a
 * `templateId`'s template (pages/from-template.ts).
 */
export async function createPage(
  trx: Transaction<Database>,
  tenantId: string,
  input: PageCreate,
  originOf: OriginOf,
  starts: TemplateStarts,
): Promise<Page> {
  const start = await beginning(trx, tenantId, input, starts);
  const { actions, headerActionId } = resolveActions(start.known, null, start.actions, start.headerActionId);
  const errors: FieldError[] = [];
  const metadata =
    input.metadata === undefined ? null : await mergeMetadata(trx, tenantId, null, input.metadata, '/metadata', errors, originOf);
  errors.push(...start.errorsOf(await contentErrors(trx, tenantId, start.content, actionIds(actions))));
  throwIfAny(errors);
  const at = now();
  const status = input.status ?? 'draft';
  const row: PagesTable = {
    id: newId('page'),
    tenant_id: tenantId,
    name: input.name,
    name_lc: input.name.toLowerCase(),
    title: input.title,
    page_context: input.pageContext,
    page_type: input.pageType,
    status,
    flags: JSON.stringify(input.flags ?? []),
    brand_id: input.brandId ?? '',
    header_action_id: headerActionId,
    actions: JSON.stringify(actions),
    action_card_widgets: JSON.stringify(input.actionCardWidgets ?? []),
    footer_links: JSON.stringify(input.footerLinks ?? []),
    scripts: JSON.stringify(input.scripts ?? []),
    metadata: metadata === null ? null : JSON.stringify(metadata),
    content: start.content === undefined ? null : JSON.stringify(start.content),
    audience_seq: 0,
    archived_at: status === 'archived' ? at : null,
    deleted_at: null,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('pages').values(row).execute();
  await bump(trx, tenantId, 'pages');
  const page = toPage({ ...row, audiences_count: 0 });
  await emit(trx, tenantId, 'page.created', page);
  return page;
}

/**
 * What the audiences keep of their page: whether it is deleted (its name is read from the page,
 * issue 50). The audiences area's function (audiences/page-copies.ts), handed in by app.ts:
 * audiences import pages, so pages import none of them.
 */
export interface PageCopies {
  deleted(trx: Transaction<Database>, pageId: string): Promise<void>;
}

/**
 * Undefined when there is no such live page. Read-only fields must equal the page's; a patch that
 * changes no value (`{}`, or the page as read) changes nothing, `updatedAt` included.
 *
 * On PostgreSQL a patch first reads the page and writes it, with its event, in one statement that
 * holds only if the page is still as read (its `updatedAt`): two round trips, where a transaction
 * took five. A page changed in between is patched again under its row's lock. On SQLite, where
 * writers take turns, the patch is one transaction.
 */
export async function updatePage(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  body: PageUpdate,
  originOf: OriginOf,
): Promise<Page | undefined> {
  if (isPostgres(db) && !db.isTransaction) {
    const page = await patchPage(db, tenantId, pageId, body, originOf);
    if (page !== RACED) return page;
  }
  const page = await (db.isTransaction
    ? patchPage(db, tenantId, pageId, body, originOf, true)
    : db.transaction().execute((trx) => patchPage(trx, tenantId, pageId, body, originOf, true)));
  // Under the row's lock (or SQLite's one writer) the page cannot change between read and write.
  return page === RACED ? undefined : page;
}

/** The page changed between the patch's read and its write. */
const RACED = Symbol('raced');

async function patchPage(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  body: PageUpdate,
  originOf: OriginOf,
  locked = false,
): Promise<Page | undefined | typeof RACED> {
  const current = await findPageCounted(db, tenantId, pageId, locked && isPostgres(db));
  if (!current) return undefined;
  const shown = toPage(current);
  const patch = settle(PageUpdate, body, shown);
  if (Object.keys(patch).length === 0) return shown;
  const errors: FieldError[] = [];
  const metadata =
    patch.metadata === undefined
      ? undefined
      : await patchPageMetadata(db, tenantId, parseMetadata(current.metadata), patch.metadata, errors, originOf);
  throwIfAny(errors);
  const { actions, headerActionId } = resolveActions(
    JSON.parse(current.actions) as StoredAction[],
    current.header_action_id,
    patch.actions,
    patch.headerActionId,
  );
  await checkContent(db, tenantId, patch.content, actionIds(actions));
  const at = after(current.updated_at);
  const changes: Partial<PagesTable> = { updated_at: at, header_action_id: headerActionId, actions: JSON.stringify(actions) };
  if (patch.name !== undefined) {
    changes.name = patch.name;
    changes.name_lc = patch.name.toLowerCase();
  }
  if (patch.pageContext !== undefined) changes.page_context = patch.pageContext;
  if (patch.pageType !== undefined) changes.page_type = patch.pageType;
  if (patch.brandId !== undefined) changes.brand_id = patch.brandId;
  if (patch.actionCardWidgets !== undefined) changes.action_card_widgets = JSON.stringify(patch.actionCardWidgets);
  if (patch.footerLinks !== undefined) changes.footer_links = JSON.stringify(patch.footerLinks);
  if (patch.scripts !== undefined) changes.scripts = JSON.stringify(patch.scripts);
  if (metadata !== undefined) changes.metadata = JSON.stringify(metadata);
  if (patch.content !== undefined) changes.content = patch.content === null ? null : JSON.stringify(patch.content);
  if (patch.status !== undefined && patch.status !== current.status) {
    changes.status = patch.status;
    changes.archived_at = patch.status === 'archived' ? at : null;
  }
  // A merge that adds nothing (metadata `{}`, a field reset that was never set) changes nothing.
  const changed = (Object.keys(changes) as (keyof PagesTable)[]).some((k) => k !== 'updated_at' && changes[k] !== current[k]);
  if (!changed) return shown;
  // The row as written, without reading it again: a patch moves no audience, so the count read
  // with it stands, and counting a page's thousands of audiences twice was most of a rename's cost.
  const page = toPage({ ...current, ...changes });
  const columns = Object.keys(changes) as PatchedColumn[];
  const shape = `${locked ? 'locked' : 'as-read'}:${columns.join(',')}`;
  const params: PageChange = { ...changes, pageId, readAt: current.updated_at };
  const written = await changeAndEmit(db, pageChange, shape, params, tenantId, 'page.updated', page);
  return written ? page : RACED;
}

type PatchedColumn = keyof PagesTable;
type PageChange = Partial<PagesTable> & { pageId: string; readAt: string };

/**
 * A patch's UPDATE of the live page, by its shape (`locked:` or `as-read:`, then the columns it
 * sets): under the row's lock, or holding only if the page is still as read (`readAt`).
 */
const pageChange = changeStatement((db, p: PageChange, shape: string) => {
  const [lock, list = ''] = shape.split(':');
  const set = Object.fromEntries(list.split(',').map((c) => [c, p[c as PatchedColumn]]));
  const update = db.updateTable('pages').set(set).where('id', '=', p.pageId).where('deleted_at', 'is', null);
  return (lock === 'locked' ? update : update.where('updated_at', '=', p.readAt)).returning('id');
});

/** The number of the page's next audience (numbers are never reused). */
export async function nextAudienceNumber(trx: Transaction<Database>, pageId: string): Promise<PagesTable['audience_seq']> {
  const { audience_seq: number } = await trx
    .updateTable('pages')
    .set({ audience_seq: sql<number>`audience_seq + 1` })
    .where('id', '=', pageId)
    .returning('audience_seq')
    .executeTakeFirstOrThrow();
  return number;
}

/** Marks the page deleted; false when there is no such live page. */
export async function deletePage(trx: Transaction<Database>, tenantId: string, pageId: string, copies: PageCopies): Promise<boolean> {
  const current = await getPage(trx, tenantId, pageId);
  if (!current) return false;
  const at = after(current.updatedAt);
  const deleted = await trx
    .updateTable('pages')
    .set({ deleted_at: at, updated_at: at })
    .where('id', '=', pageId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  // A concurrent delete of the same page may have won (PostgreSQL): it counted the page out.
  if (Number(deleted.numUpdatedRows) === 0) return false;
  await bump(trx, tenantId, 'pages', -1);
  // Its visits leave the pages overview with it.
  await noteChange(trx, `sessions:${tenantId}`);
  // Its audiences leave search; its links, dead now, are deleted (which frees their paths).
  await copies.deleted(trx, pageId);
  await deletePageLinksOf(trx, tenantId, pageId, at);
  await emit(trx, tenantId, 'page.deleted', { ...current, deletedAt: at, updatedAt: at });
  return true;
}

const pagesList = keysetList({ name: 'pages', table: 'pages', ...NEWEST_FIRST });

/** Summaries (no content, not even read) unless `include=content` asks for whole pages, 10 at most then. */
export async function listPages(db: Kysely<Database>, tenantId: string, query: PageListQuery) {
  const settled = contentListQuery(query);
  const live = db.selectFrom('pages').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  const count = () => counter(db, tenantId, 'pages');
  if (settled.include === 'content') {
    return pagesList.read({ query: settled, rows: live.selectAll().select(audiencesCount), count, map: toPage });
  }
  return pagesList.read({ query: settled, rows: live.select(SUMMARY_COLUMNS).select(audiencesCount), count, map: toPageSummary });
}

/** The pages of these ids, any tenant (the agent's batch spans tenants). */
export async function pageRowsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<PagesTable[]> {
  return ids.length === 0 ? [] : db.selectFrom('pages').selectAll().where('id', 'in', ids).execute();
}

/** Which of `ids` are pages of the tenant, deleted ones included. */
export async function pageIdsAmong(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('pages').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The name of the tenant's page, deleted or not, if it is there. */
export async function pageNameOf(db: Kysely<Database>, tenantId: string, pageId: string): Promise<string | undefined> {
  const row = await db.selectFrom('pages').select('name').where('tenant_id', '=', tenantId).where('id', '=', pageId).executeTakeFirst();
  return row?.name;
}

/** The page of this id, deleted or not; it must be there. */
export function pageRowById(db: Kysely<Database>, pageId: string): Promise<PagesTable> {
  return db.selectFrom('pages').selectAll().where('id', '=', pageId).executeTakeFirstOrThrow();
}
