import type { Kysely, Transaction } from 'kysely';
import type { Database, TemplatesTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { conflict, invalidField } from '../http/errors.js';
import { contentListQuery, keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { type StoredAction, type PageStart, findPage, pageContent, type Content, checkContentSize } from '../pages/index.js';
import { after, now } from '../time.js';
import { BUILT_INS, builtInById } from './built-ins/index.js';
import { type Template, type TemplateCreate, type TemplateListQuery, type TemplateSummary, TemplateUpdate } from './schemas.js';

/** What the list reads of a template (issue 45): every column but `content`, which may be 512 KB. */
const SUMMARY_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'description',
  'actions',
  'header_action_id',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof TemplatesTable)[];
type SummaryRow = Pick<TemplatesTable, (typeof SUMMARY_COLUMNS)[number]>;

export function toTemplateSummary(row: SummaryRow): TemplateSummary {
  const actions = JSON.parse(row.actions) as StoredAction[];
  const builtIn = builtInById(row.id) !== undefined;
  return {
    templateId: row.id,
    name: row.name,
    description: row.description,
    builtIn,
    actions: actions.map((a, actionIndex) => ({ ...a, actionIndex })),
    ...(row.header_action_id !== null ? { headerActionId: row.header_action_id } : {}),
    createdAt: builtIn ? null : row.created_at,
    updatedAt: builtIn ? null : row.updated_at,
  };
}

export const toTemplate = (row: TemplatesTable): Template => ({ ...toTemplateSummary(row), content: JSON.parse(row.content) as Content });

/** A tenant's own template, as stored; built-ins are never rows. */
export function findTemplate(db: Kysely<Database>, tenantId: string, templateId: string) {
  return db.selectFrom('templates').selectAll().where('id', '=', templateId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** A built-in (any tenant's) or the tenant's own template, as stored or as a built-in's row. */
async function findAny(db: Kysely<Database>, tenantId: string, templateId: string): Promise<TemplatesTable | undefined> {
  return builtInById(templateId) ?? (await findTemplate(db, tenantId, templateId));
}

export async function getTemplate(db: Kysely<Database>, tenantId: string, templateId: string): Promise<Template | undefined> {
  const row = await findAny(db, tenantId, templateId);
  return row && toTemplate(row);
}

/** What a page made from the template starts with (handed to the pages area by app.ts); undefined: no such template for this tenant. */
export async function templateStart(db: Kysely<Database>, tenantId: string, templateId: string): Promise<PageStart | undefined> {
  const row = await findAny(db, tenantId, templateId);
  if (!row) return undefined;
  return {
    content: JSON.parse(row.content) as Content,
    actions: JSON.parse(row.actions) as StoredAction[],
    headerActionId: row.header_action_id,
  };
}

/** The page's content, actions and header action as they are now, under a name; the page must be a live page of the tenant (400 at /pageId). */
export async function createTemplate(trx: Transaction<Database>, tenantId: string, input: TemplateCreate): Promise<Template> {
  const page = await findPage(trx, tenantId, input.pageId);
  if (!page) throw invalidField('/pageId', 'is not a page of this tenant');
  // A page written before content was bounded may be larger than a template may be.
  const content = pageContent(page);
  checkContentSize(content, '/pageId', 'names a page whose content is');
  const at = now();
  const row: TemplatesTable = {
    id: newId('template'),
    tenant_id: tenantId,
    name: input.name,
    description: input.description ?? '',
    content: JSON.stringify(content),
    actions: page.actions,
    header_action_id: page.header_action_id,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('templates').values(row).execute();
  const template = toTemplate(row);
  await emit(trx, tenantId, 'template.created', template);
  return template;
}

const refuseBuiltIn = (row: TemplatesTable, verb: string) => {
  if (builtInById(row.id)) {
    throw conflict(`A built-in template cannot be ${verb}: make a page from it, then save that page as a template of your own`);
  }
};

/** Undefined: no such template for the tenant. A built-in is a conflict (409). */
export async function updateTemplate(
  trx: Transaction<Database>,
  tenantId: string,
  templateId: string,
  body: TemplateUpdate,
): Promise<Template | undefined> {
  const current = await findAny(trx, tenantId, templateId);
  if (!current) return undefined;
  refuseBuiltIn(current, 'changed');
  const shown = toTemplate(current);
  const patch = settle(TemplateUpdate, body, shown);
  const changes: Partial<TemplatesTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.description !== undefined) changes.description = patch.description;
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('templates').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toTemplate(row);
}

/** False: no such template for the tenant. A built-in is a conflict (409). Pages made from it keep their copy. */
export async function deleteTemplate(trx: Transaction<Database>, tenantId: string, templateId: string): Promise<boolean> {
  const current = await findAny(trx, tenantId, templateId);
  if (!current) return false;
  refuseBuiltIn(current, 'deleted');
  const deleted = await trx.deleteFrom('templates').where('id', '=', current.id).executeTakeFirst();
  // A concurrent delete of the same template may have won (PostgreSQL): it emitted the event.
  if (Number(deleted.numDeletedRows) === 0) return false;
  await emit(trx, tenantId, 'template.deleted', toTemplate(current));
  return true;
}

const templatesList = keysetList({ name: 'templates', table: 'templates', ...NEWEST_FIRST });

/**
 * The built-ins first, in their order, then the tenant's own, newest first. A built-in's sort key
 * is made to come before any row's (`BUILT_IN_SORT_TIME`, ids in descending order), so one keyset
 * walks both: a cursor after a built-in finds the remaining built-ins here and every row in SQL.
 * Summaries (their content not even read) unless `include=content` asks for whole templates, 10 at most then.
 */
export async function listTemplates(db: Kysely<Database>, tenantId: string, query: TemplateListQuery) {
  const settled = contentListQuery(query);
  const withContent = settled.include === 'content';
  const request = templatesList.request(settled);
  const [time, id] = (request.after ?? []).map(String);
  // Those after the cursor in the list's order (descending), compared as the database compares the key.
  const builtIns =
    time === undefined || id === undefined
      ? BUILT_INS
      : BUILT_INS.filter((b) => b.created_at < time || (b.created_at === time && b.id < id));
  const own = db.selectFrom('templates').where('tenant_id', '=', tenantId);
  const wanted = request.limit + 1 - builtIns.length;
  const [rows, ownCount] = await Promise.all([
    wanted > 0
      ? own
          .$if(withContent, (q) => q.select('content'))
          .select(SUMMARY_COLUMNS)
          .$call(templatesList.apply({ ...request, limit: wanted - 1 }))
          .execute()
      : Promise.resolve([]),
    own.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return templatesList.toListPage({
    request,
    rows: [...builtIns, ...rows].slice(0, request.limit + 1),
    totalCount: BUILT_INS.length + Number(ownCount.n),
    map: (row: SummaryRow & { content?: string }): TemplateSummary =>
      withContent && row.content !== undefined ? toTemplate({ ...row, content: row.content }) : toTemplateSummary(row),
  });
}
