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
const Font = StringEnum(SITE_FONTS, { description: 'A system font stack: nothing is downloaded' });

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
    },
    { additionalProperties: false, $id: 'SiteSettingsUpdate' },
  ),
);
export type SiteSettingsUpdate = Static<typeof SiteSettingsUpdate>;
