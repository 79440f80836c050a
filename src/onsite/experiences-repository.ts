import type { Kysely, Transaction } from 'kysely';
import { checkRules, parseRules, type Rules } from '../audiences/index.js';
import type { Database, ExperiencesTable, SitesTable } from '../db/types.js';
import { type FieldError, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import { isIdShaped, newId } from '../ids.js';
import { after, now } from '../time.js';
import { type Change, type ChangeInput, changeErrors, toStoredChange } from './changes.js';
import { type Experience, type ExperienceCreate, type ExperienceListQuery, ExperienceUpdate } from './schemas.js';
import { findSite } from './sites-repository.js';
import { type UrlMatch, urlMatchErrors, urlPatternProblem } from './url-match.js';

/** A live experience as the visitor plane applies it (decisions, the script's patterns, measurement). */
export interface LiveExperience {
  experienceId: string;
  tenantId: string;
  siteId: string;
  name: string;
  urlMatch: UrlMatch;
  /** null: every visitor. */
  rules: Rules | null;
  priority: number;
  holdoutPercent: number;
  /** A glob path pattern (url-match.ts `conversionMatch`); null: none. */
  conversionUrl: string | null;
  changes: Change[];
  updatedAt: string;
}

const changesOf = (row: ExperiencesTable): Change[] => JSON.parse(row.changes) as Change[];
const urlMatchOf = (row: ExperiencesTable): UrlMatch => ({ type: row.url_match_type, value: row.url_match_value });

export const toExperience = (row: ExperiencesTable): Experience => ({
  experienceId: row.id,
  siteId: row.site_id,
  name: row.name,
  status: row.status,
  urlMatch: urlMatchOf(row),
  rules: parseRules(row.rules),
  priority: Number(row.priority),
  holdoutPercent: Number(row.holdout_percent),
  conversionUrl: row.conversion_url,
  changes: changesOf(row),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toLive = (row: ExperiencesTable): LiveExperience => ({
  experienceId: row.id,
  tenantId: row.tenant_id,
  siteId: row.site_id,
  name: row.name,
  urlMatch: urlMatchOf(row),
  rules: parseRules(row.rules),
  priority: Number(row.priority),
  holdoutPercent: Number(row.holdout_percent),
  conversionUrl: row.conversion_url,
  changes: changesOf(row),
  updatedAt: row.updated_at,
});

/**
 * A site's live experiences, highest priority first (ties: the older one first, then by id), so
 * the first match is the one applied.
 */
export async function liveExperiencesOfSite(db: Kysely<Database>, siteId: string): Promise<LiveExperience[]> {
  const rows = await db
    .selectFrom('experiences')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('status', '=', 'live')
    .orderBy('priority', 'desc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toLive);
}

/**
 * The stored changes of every experience of the tenant (any status: a draft is previewed before it
 * goes live), as JSON text: the images their sections show are files the tenant's domains serve
 * (site/serve/served-files.ts), since an inserted section loads them from there.
 */
export async function experienceChangesOfTenant(db: Kysely<Database>, tenantId: string): Promise<string[]> {
  const rows = await db.selectFrom('experiences').select('changes').where('tenant_id', '=', tenantId).execute();
  return rows.map((r) => r.changes);
}

interface Checkable {
  urlMatch?: UrlMatch;
  rules?: Rules | null;
  conversionUrl?: string | null;
  changes?: ChangeInput[];
}

/** Every check a schema cannot say, all errors named at once. */
async function checkFields(db: Kysely<Database>, tenantId: string, input: Checkable): Promise<void> {
  const errors: FieldError[] = [];
  if (input.urlMatch) errors.push(...urlMatchErrors(input.urlMatch, '/urlMatch'));
  if (input.conversionUrl !== undefined && input.conversionUrl !== null) {
    const problem = urlPatternProblem('glob', input.conversionUrl);
    if (problem) errors.push({ path: '/conversionUrl', message: problem });
  }
  if (input.rules) {
    try {
      checkRules(input.rules, '/rules');
    } catch (err) {
      const listed = (err as { errors?: FieldError[] }).errors;
      if (!listed) throw err;
      errors.push(...listed);
    }
  }
  if (input.changes) errors.push(...(await changeErrors(db, tenantId, input.changes)));
  throwIfAny(errors);
}

/** The site a body names, of this tenant: 400 at `/siteId` otherwise (a malformed id names nothing either). */
async function siteOf(db: Kysely<Database>, tenantId: string, siteId: string): Promise<SitesTable> {
  const site = isIdShaped(siteId) ? await findSite(db, tenantId, siteId) : undefined;
  if (!site) throw invalidField('/siteId', 'is not a site of this tenant');
  return site;
}

const storedChanges = (changes: ChangeInput[]) => JSON.stringify(changes.map(toStoredChange));

export async function createExperience(trx: Transaction<Database>, tenantId: string, input: ExperienceCreate): Promise<Experience> {
  const site = await siteOf(trx, tenantId, input.siteId);
  await checkFields(trx, tenantId, input);
  const at = now();
  const row: ExperiencesTable = {
    id: newId('experience'),
    tenant_id: tenantId,
    site_id: site.id,
    name: input.name,
    status: input.status ?? 'draft',
    url_match_type: input.urlMatch.type,
    url_match_value: input.urlMatch.value,
    rules: input.rules ? JSON.stringify(input.rules) : null,
    priority: input.priority ?? 0,
    holdout_percent: input.holdoutPercent ?? 0,
    conversion_url: input.conversionUrl ?? null,
    changes: storedChanges(input.changes),
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('experiences').values(row).execute();
  return toExperience(row);
}

export function findExperience(db: Kysely<Database>, tenantId: string, experienceId: string) {
  return db.selectFrom('experiences').selectAll().where('id', '=', experienceId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Only the fields present change; `changes` and `rules` replace whole; null rules: every visitor. */
export async function updateExperience(trx: Transaction<Database>, current: ExperiencesTable, body: ExperienceUpdate): Promise<Experience> {
  const shown = toExperience(current);
  const patch = settle(ExperienceUpdate, body, shown);
  await checkFields(trx, current.tenant_id, patch);
  const changes: Partial<ExperiencesTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.status !== undefined) changes.status = patch.status;
  if (patch.urlMatch !== undefined) {
    changes.url_match_type = patch.urlMatch.type;
    changes.url_match_value = patch.urlMatch.value;
  }
  if (patch.rules !== undefined) changes.rules = patch.rules === null ? null : JSON.stringify(patch.rules);
  if (patch.priority !== undefined) changes.priority = patch.priority;
  if (patch.holdoutPercent !== undefined) changes.holdout_percent = patch.holdoutPercent;
  if (patch.conversionUrl !== undefined) changes.conversion_url = patch.conversionUrl;
  if (patch.changes !== undefined) changes.changes = storedChanges(patch.changes);
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('experiences').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toExperience(row);
}

export async function deleteExperience(trx: Transaction<Database>, current: ExperiencesTable): Promise<void> {
  await trx.deleteFrom('experiences').where('id', '=', current.id).execute();
}

/** A site's experiences go with it (the site's deletion, in its transaction). */
export async function deleteExperiencesOfSite(trx: Transaction<Database>, site: SitesTable): Promise<number> {
  const result = await trx
    .deleteFrom('experiences')
    .where('tenant_id', '=', site.tenant_id)
    .where('site_id', '=', site.id)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

const experiencesList = keysetList({ name: 'experiences', table: 'experiences', ...NEWEST_FIRST });

/** A siteId of no site of the tenant lists nothing, as a filter that matches nothing does. */
export async function listExperiences(db: Kysely<Database>, tenantId: string, query: ExperienceListQuery) {
  let matching = db.selectFrom('experiences').where('tenant_id', '=', tenantId);
  if (query.siteId !== undefined) matching = matching.where('site_id', '=', query.siteId);
  if (query.status !== undefined) matching = matching.where('status', '=', query.status);
  return experiencesList.read({
    query,
    filters: { siteId: query.siteId ?? null, status: query.status ?? null },
    rows: matching.selectAll(),
    count: matching,
    map: toExperience,
  });
}
