import type { Kysely, Transaction } from 'kysely';
import { findLiveImageAsset } from '../assets/index.js';
import { lockExclusive } from '../db/locks.js';
import type { Database, SiteSettingsTable } from '../db/types.js';
import type { FieldError } from '../http/errors.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import { phoneCountry } from '../phone.js';
import { after, now } from '../time.js';
import { contrastFailures } from './contrast.js';
import { type SiteSettings, SiteSettingsUpdate } from './schemas.js';

/** What a tenant that never changed its settings is served: the default style's colours (src/render/style.ts). */
export const DEFAULT_SITE_SETTINGS: SiteSettings = {
  logoAssetId: null,
  brandColor: '#0b57d0',
  textColor: '#1f2328',
  backgroundColor: '#ffffff',
  font: 'system',
  footerText: null,
  privacyUrl: null,
  faviconAssetId: null,
  defaultCountry: null,
  enrichment: true,
  updatedAt: null,
};

export const toSiteSettings = (row: SiteSettingsTable): SiteSettings => ({
  logoAssetId: row.logo_asset_id,
  brandColor: row.brand_color,
  textColor: row.text_color,
  backgroundColor: row.background_color,
  font: row.font,
  footerText: row.footer_text,
  privacyUrl: row.privacy_url,
  faviconAssetId: row.favicon_asset_id,
  defaultCountry: row.default_country,
  enrichment: row.enrichment === 1,
  updatedAt: row.updated_at,
});

export function findSiteSettings(db: Kysely<Database>, tenantId: string): Promise<SiteSettingsTable | undefined> {
  return db.selectFrom('site_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The tenant's `defaultCountry`: the country a phone number typed without a country code is in; null when unset. */
export async function defaultCountryOf(db: Kysely<Database>, tenantId: string): Promise<string | null> {
  const row = await db.selectFrom('site_settings').select('default_country').where('tenant_id', '=', tenantId).executeTakeFirst();
  return row?.default_country ?? null;
}

/** Whether the tenant's leads and visits are enriched (issue 39): true unless the tenant turned it off. */
export async function enrichmentOn(db: Kysely<Database>, tenantId: string): Promise<boolean> {
  const row = await db.selectFrom('site_settings').select('enrichment').where('tenant_id', '=', tenantId).executeTakeFirst();
  return row === undefined || row.enrichment === 1;
}

export async function getSiteSettings(db: Kysely<Database>, tenantId: string): Promise<SiteSettings> {
  const row = await findSiteSettings(db, tenantId);
  return row ? toSiteSettings(row) : DEFAULT_SITE_SETTINGS;
}

const ASSET_FIELDS = ['logoAssetId', 'faviconAssetId'] as const;
const COLOR_FIELDS = ['brandColor', 'textColor', 'backgroundColor'] as const;

/**
 * Read-modify-write under the tenant's settings lock, so two PATCHes never pass the contrast check
 * each against the other's old colours. Every refusal (an asset that is not an active image of the
 * tenant, a colour pair below WCAG AA) is a 400 naming its field, before anything is written. The
 * new `updated_at` is in every served document's stamp (src/site/serve/stamp.ts): the next request
 * on any instance renders with the new settings.
 */
export async function updateSiteSettings(trx: Transaction<Database>, tenantId: string, body: SiteSettingsUpdate): Promise<SiteSettings> {
  await lockExclusive(trx, `site_settings:${tenantId}`);
  const current = await findSiteSettings(trx, tenantId);
  const shown = current ? toSiteSettings(current) : DEFAULT_SITE_SETTINGS;
  const lowered = { ...body };
  for (const field of COLOR_FIELDS) {
    const value = lowered[field];
    if (value !== undefined) lowered[field] = value.toLowerCase();
  }
  if (typeof lowered.defaultCountry === 'string') lowered.defaultCountry = lowered.defaultCountry.toUpperCase();
  const patch = settle(SiteSettingsUpdate, lowered, shown);
  if (Object.keys(patch).length === 0) return shown;
  const next: SiteSettings = { ...shown, ...patch };
  const errors: FieldError[] = [];
  for (const field of ASSET_FIELDS) {
    const assetId = patch[field];
    if (typeof assetId === 'string' && !(await findLiveImageAsset(trx, tenantId, assetId))) {
      errors.push({ path: `/${field}`, message: 'is not an active image asset of this tenant' });
    }
  }
  if (typeof patch.defaultCountry === 'string' && !phoneCountry(patch.defaultCountry)) {
    errors.push({ path: '/defaultCountry', message: 'is not an ISO 3166-1 alpha-2 country code we know, like US, GB or DE' });
  }
  for (const failure of contrastFailures(next, new Set(Object.keys(patch)))) {
    errors.push({ path: `/${failure.field}`, message: failure.message });
  }
  throwIfAny(errors);
  const at = current ? after(current.updated_at) : now();
  const row: SiteSettingsTable = {
    tenant_id: tenantId,
    logo_asset_id: next.logoAssetId,
    favicon_asset_id: next.faviconAssetId,
    brand_color: next.brandColor,
    text_color: next.textColor,
    background_color: next.backgroundColor,
    font: next.font,
    footer_text: next.footerText,
    privacy_url: next.privacyUrl,
    default_country: next.defaultCountry,
    enrichment: next.enrichment ? 1 : 0,
    created_at: current?.created_at ?? at,
    updated_at: at,
  };
  const { tenant_id: _, created_at: __, ...changes } = row;
  await trx
    .insertInto('site_settings')
    .values(row)
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet(changes))
    .execute();
  return toSiteSettings(row);
}

// The served page's logo and favicon read their image through the assets' own function.
export { findShownImage } from '../assets/index.js';
