import { Type, type Static } from '@sinclair/typebox';
import { SITE_FONTS } from '../db/enums.js';
import { HttpUrl, Nullable, NullableTimestamp, StringEnum } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '#rrggbb; stored and shown lowercased' });
const AssetId = Type.String({ minLength: 1, maxLength: 64, description: 'An active image asset of the tenant' });
/** Enough for a few lines and links; the served document stays small (docs/publishing.md). */
export const FOOTER_TEXT_MAX = 2000;
const FooterText = Type.String({
  minLength: 1,
  maxLength: FOOTER_TEXT_MAX,
  description: 'Markdown: text, emphasis, lists and http(s)/mailto links',
});
const Country = Type.String({
  pattern: '^[A-Za-z]{2}$',
  description:
    'ISO 3166-1 alpha-2 (US, GB, DE), stored uppercased: the country of phone numbers typed without a country code. Null (the default): such numbers are refused, asking for one.',
});
const Enrichment = Type.Boolean({
  description:
    "true (the default): a lead's email domain names the tenant's account of that domain, and the enrichment provider, when the service has one, is asked about the company (docs/enrichment.md). false: neither, and each lead emits `form.enrichment_failed` with `no_provider`.",
});
const Font = StringEnum(SITE_FONTS, {
  description:
    "system, serif, rounded, mono: a system font stack, nothing is downloaded. inter, source-sans-3, ibm-plex-sans, lora, merriweather, playfair-display: served by the tenant's own domain (latin, regular and bold, woff2), with a fallback of the same size while it loads",
});

export const SiteSettings = Type.Object(
  {
    logoAssetId: Nullable(AssetId),
    brandColor: Color,
    textColor: Color,
    backgroundColor: Color,
    font: Font,
    footerText: Nullable(FooterText),
    privacyUrl: Nullable(HttpUrl),
    faviconAssetId: Nullable(AssetId),
    defaultCountry: Nullable(Country),
    enrichment: Enrichment,
    updatedAt: NullableTimestamp,
  },
  { $id: 'SiteSettings' },
);
export type SiteSettings = Static<typeof SiteSettings>;

/** Every field optional; `null` clears a nullable field; an empty body changes nothing; `updatedAt` as read. */
export const SiteSettingsUpdate = RoundTrip(
  SiteSettings,
  Type.Object(
    {
      logoAssetId: Type.Optional(Nullable(AssetId)),
      brandColor: Type.Optional(Color),
      textColor: Type.Optional(Color),
      backgroundColor: Type.Optional(Color),
      font: Type.Optional(Font),
      footerText: Type.Optional(Nullable(FooterText)),
      privacyUrl: Type.Optional(Nullable(HttpUrl)),
      faviconAssetId: Type.Optional(Nullable(AssetId)),
      defaultCountry: Type.Optional(Nullable(Country)),
      enrichment: Type.Optional(Enrichment),
    },
    { additionalProperties: false, $id: 'SiteSettingsUpdate' },
  ),
);
export type SiteSettingsUpdate = Static<typeof SiteSettingsUpdate>;
