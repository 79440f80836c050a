import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { PAGE_STATUSES, PAGE_TYPES } from '../db/enums.js';
import { ContentListQuery, MAX_SAFE_INTEGER, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';
import { readOnly, RoundTrip } from '../http/round-trip.js';
import { PreviewVisit } from './preview-visit.js';
import { Section } from './section-schema.js';

export const PageType = StringEnum(PAGE_TYPES);
export const PageStatus = StringEnum(PAGE_STATUSES);
/** Pages and audiences share the one flag the reference allows. */
export const Flags = Type.Array(StringEnum(['home_page']), { uniqueItems: true });

const closed = { additionalProperties: false } as const;

/**
 * The directives search engines read (Google's list); each element is one directive, joined with
 * ", " in the served document.
 */
export const ROBOTS_PATTERN =
  '^(index|noindex|follow|nofollow|noarchive|nosnippet|noimageindex|max-snippet:(-1|0|[1-9][0-9]{0,8})|max-image-preview:(none|standard|large)|max-video-preview:(-1|0|[1-9][0-9]{0,8})|unavailable_after:[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?)$';
const Robots = Type.Array(
  Type.String({
    pattern: ROBOTS_PATTERN,
    description:
      'index, noindex, follow, nofollow, noarchive, nosnippet, noimageindex, max-snippet:N, max-image-preview:none|standard|large, max-video-preview:N (N: -1 or 0 to 999999999), unavailable_after:<ISO 8601 date or date-time>',
  }),
  { maxItems: 20 },
);
const ImageAssetId = (kind: 'og' | 'twitter') =>
  Type.String({
    minLength: 1,
    description: `Extension. An image asset of the tenant: the service sets ${kind}ImageFileId and ${kind}ImageUrl from it; null clears the three. In responses only when set`,
  });

/** Every Metadata field; responses carry all of them (unset strings as "", unset arrays as []). */
export const Metadata = Type.Object(
  {
    title: Type.String(),
    description: Type.String(),
    keywords: Type.Array(Type.String()),
    author: Type.String(),
    robots: Robots,
    canonicalUrl: Type.String(),
    ogTitle: Type.String(),
    ogDescription: Type.String(),
    ogImageUrl: Type.String(),
    ogImageFileId: Type.String(),
    ogImageAlt: Type.String(),
    ogSiteName: Type.String(),
    ogUrl: Type.String(),
    twitterTitle: Type.String(),
    twitterDescription: Type.String(),
    twitterImageUrl: Type.String(),
    twitterImageFileId: Type.String(),
    twitterImageAlt: Type.String(),
    twitterSite: Type.String(),
    twitterCreator: Type.String(),
    themeColor: Type.String(),
    ogImageAssetId: Type.Optional(ImageAssetId('og')),
    twitterImageAssetId: Type.Optional(ImageAssetId('twitter')),
  },
  { $id: 'Metadata' },
);
export type Metadata = Static<typeof Metadata>;

/** The image fields are set by the service (from the image asset ids), never by a page request. */
export const METADATA_IMAGE_FIELDS = ['ogImageUrl', 'ogImageFileId', 'twitterImageUrl', 'twitterImageFileId'] as const;
const assetIds = {
  ogImageAssetId: Type.Optional(Nullable(ImageAssetId('og'))),
  twitterImageAssetId: Type.Optional(Nullable(ImageAssetId('twitter'))),
};
/** Metadata of a page's creation: no image url or file id (400 naming them), the image asset ids instead. */
export const MetadataInput = Type.Object({ ...Type.Omit(Type.Partial(Metadata), METADATA_IMAGE_FIELDS).properties, ...assetIds }, closed);
export type MetadataInput = Static<typeof MetadataInput>;
/** Any subset of Metadata's fields, laid over the page's metadata. */
export const MetadataPartial = Type.Partial(Metadata, closed);
export type MetadataPartial = Static<typeof MetadataPartial>;

/** A field of a JSON Merge Patch: present replaces, null removes (back to the default), absent keeps. */
const mergeable = (properties: TProperties): TProperties =>
  Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, Type.Optional(Nullable(p as Parameters<typeof Nullable>[0]))]));
const MERGE = 'A JSON Merge Patch (RFC 7396) on the stored metadata: fields present replace, null resets a field, absent ones keep';

/** Metadata of a page's PATCH: merged; the image url and file id fields only as read (read-only). */
export const MetadataPatch = Type.Object(
  {
    ...mergeable(MetadataInput.properties),
    ...Object.fromEntries(METADATA_IMAGE_FIELDS.map((f) => [f, Type.Optional(readOnly(Metadata.properties[f]))])),
  },
  { ...closed, description: MERGE },
);
export type MetadataPatch = Static<typeof MetadataPatch>;

/** An audience's override in a PATCH: merged into the stored override (null clears it whole). */
export const MetadataOverridePatch = Type.Object(mergeable(MetadataPartial.properties), {
  ...closed,
  description: `${MERGE}; null instead of the object clears the override`,
});
export type MetadataOverridePatch = Static<typeof MetadataOverridePatch>;

export const Action = Type.Object(
  {
    actionId: Type.String(),
    actionIndex: Type.Integer({ minimum: 0, description: 'The position of the action in `actions`, from 0' }),
    purpose: Type.String(),
    buttonTitle: Type.String(),
    actionType: Type.String({ minLength: 1 }),
    url: Type.String(),
  },
  { $id: 'Action' },
);
export const ActionInput = Type.Object(
  {
    actionId: Type.Optional(Type.String({ description: 'Keeps an existing action; omit it for a new one' })),
    purpose: Type.String(),
    buttonTitle: Type.String({ description: 'Required; a `link` action needs a non-blank one' }),
    actionType: Type.String({
      minLength: 1,
      description: 'Any non-empty string; stored as given. `link`: a button to `url`; `form`: the lead form, with no URL',
    }),
    url: Type.Optional(
      Type.String({
        description:
          'A `link` action needs an https:// URL; a `form` action needs none, and any sent is not stored (answered as ""); any other type needs one (stored as given)',
      }),
    ),
  },
  closed,
);
export type ActionInput = Static<typeof ActionInput>;
/** An action item of a PATCH: as read, `actionIndex` included (read-only: it must be the item's position). */
export const ActionPatch = Type.Object(
  {
    ...ActionInput.properties,
    actionIndex: Type.Optional(
      readOnly(Action.properties.actionIndex, "Read-only: accepted when it equals the item's position in actions, otherwise 400"),
    ),
  },
  closed,
);
export type ActionPatch = Static<typeof ActionPatch>;

export const ActionCardWidget = Type.Object(
  {
    type: Type.String({ minLength: 1, description: 'Any non-empty string; stored as given' }),
    title: Type.String(),
    logos: Type.Array(
      Type.Object(
        {
          image: Type.Object({ altText: Type.String(), url: Type.String(), fileId: Type.String(), assetId: Type.String() }, closed),
        },
        closed,
      ),
    ),
  },
  { ...closed, $id: 'ActionCardWidget' },
);

export const FooterLinkGroup = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    links: Type.Array(Type.Object({ id: Type.String(), text: Type.String(), url: Type.String() }, closed)),
  },
  { ...closed, $id: 'FooterLinkGroup' },
);

export const Script = Type.Object(
  { name: Type.String(), description: Type.String(), content: Type.String(), enabled: Type.Boolean() },
  { ...closed, $id: 'Script' },
);

/**
 * What the page shows; every text takes personalisation tokens, `body` is Markdown. Each section
 * has a layout (src/pages/section-schema.ts), `text` when absent.
 */
export const Content = Type.Object(
  {
    headline: Type.String({ maxLength: 200 }),
    subheadline: Type.String({ maxLength: 500 }),
    sections: Type.Array(Section, { maxItems: 50 }),
  },
  closed,
);
export type Content = Static<typeof Content>;
/** Content or null, closed (for requests and responses alike). */
export const NullableContent = (description: string) => Nullable(Type.Object(Content.properties, { ...closed, description }));

export const Page = Type.Object(
  {
    pageId: Type.String(),
    name: Type.String(),
    title: Type.String(),
    pageContext: Type.String(),
    pageType: PageType,
    status: PageStatus,
    flags: Flags,
    brandId: Type.String(),
    headerActionId: Type.Optional(Type.String()),
    actions: Type.Array(Action),
    actionCardWidgets: Type.Array(ActionCardWidget),
    footerLinks: Type.Array(FooterLinkGroup),
    scripts: Type.Array(Script),
    metadata: Type.Optional(Metadata),
    content: Type.Object(Content.properties, {
      description: 'Extension. Until set: the title as headline, no subheadline, no sections (the headline follows the title)',
    }),
    audiencesCount: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Audiences of the page that are not archived' }),
    archivedAt: NullableTimestamp,
    deletedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Page' },
);
export type Page = Static<typeof Page>;

/**
 * A page as lists show it (issue 45): every field of Page but `content`, which only
 * `?include=content` adds (then as Page has it), so a list never carries megabytes of bodies.
 */
export const PageSummary = Type.Object(
  {
    ...Type.Omit(Page, ['content']).properties,
    content: Type.Optional(
      Type.Object(Content.properties, { description: "Only with ?include=content: the page's content, as Page has it" }),
    ),
  },
  { $id: 'PageSummary', description: 'A page without its content (unless the list was asked to include it)' },
);
export type PageSummary = Static<typeof PageSummary>;

const Name = Type.String({ minLength: 1 });
const PageContext = Type.String({ minLength: 1 });
const HeaderActionId = Nullable(Type.String({ description: "The actionId of one of the page's actions; null clears it" }));

/**
 * Every field optional; a present field replaces the stored value (arrays whole, metadata merged);
 * the page's other fields as read (read-only).
 */
export const PageUpdate = RoundTrip(
  Page,
  Type.Object(
    {
      actions: Type.Optional(Type.Array(ActionPatch)),
      actionCardWidgets: Type.Optional(Type.Array(ActionCardWidget)),
      brandId: Type.Optional(Type.String()),
      footerLinks: Type.Optional(Type.Array(FooterLinkGroup)),
      headerActionId: Type.Optional(HeaderActionId),
      metadata: Type.Optional(MetadataPatch),
      content: Type.Optional(NullableContent('Extension; null goes back to the default made from the title')),
      name: Type.Optional(Name),
      pageContext: Type.Optional(PageContext),
      pageType: Type.Optional(PageType),
      scripts: Type.Optional(Type.Array(Script)),
      status: Type.Optional(PageStatus),
    },
    { ...closed, $id: 'PageUpdate' },
  ),
);
export type PageUpdate = Static<typeof PageUpdate>;

export const PageCreate = Type.Object(
  {
    name: Name,
    title: Type.String(),
    pageContext: PageContext,
    pageType: PageType,
    status: Type.Optional(PageStatus),
    flags: Type.Optional(Flags),
    brandId: Type.Optional(Type.String()),
    headerActionId: Type.Optional(HeaderActionId),
    actions: Type.Optional(Type.Array(ActionInput)),
    actionCardWidgets: Type.Optional(Type.Array(ActionCardWidget)),
    footerLinks: Type.Optional(Type.Array(FooterLinkGroup)),
    scripts: Type.Optional(Type.Array(Script)),
    metadata: Type.Optional(MetadataInput),
    content: Type.Optional(Content),
    templateId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Extension. A template of the tenant or a built-in (GET /v0/templates): the page starts with its content, actions and header action (the actions get new ids). Leave content, actions and headerActionId out with it',
      }),
    ),
  },
  { ...closed, $id: 'PageCreate' },
);
export type PageCreate = Static<typeof PageCreate>;

export const PageParams = Type.Object({ page_id: Type.String() });
export const PageListQuery = ContentListQuery({});
export const PagePreviewQuery = Type.Object(
  {
    audienceId: Type.Optional(
      Type.String({ minLength: 1, description: 'Preview for this audience of the page; none: the page without an audience' }),
    ),
  },
  { additionalProperties: false },
);
export const PagePreviewLink = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      description:
        'Opened without an API key, it answers the preview under a policy of its own; anyone holding it may open it until it expires',
    }),
    expiresAt: Type.String({ format: 'date-time', description: 'Five minutes after it was issued' }),
  },
  { $id: 'PagePreviewLink' },
);
export const PreviewLinkQuery = Type.Object(
  {
    tenantId: Type.String({ minLength: 1, maxLength: 64 }),
    audienceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    expires: Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' }),
    signature: Type.String({ minLength: 1, maxLength: 128 }),
  },
  { additionalProperties: false },
);
export type PageListQuery = Static<typeof PageListQuery>;

const draftFields = {
  content: Type.Optional(
    Type.Object(Content.properties, {
      ...closed,
      description: 'The content to show, checked as PATCH checks it; never stored. Absent: the stored content of what is shown',
    }),
  ),
  actions: Type.Optional(
    Type.Array(ActionPatch, {
      description:
        "The page's actions as PATCH takes them, for the buttons and call-to-action sections; absent: the stored ones. Never stored",
    }),
  ),
  visit: Type.Optional(PreviewVisit),
};
/** Unsaved content (and actions) to preview: what the console's live preview posts into its frame. */
export const PagePreviewDraft = Type.Object(draftFields, closed);
export type PagePreviewDraft = Static<typeof PagePreviewDraft>;
export const PagePreviewBody = Type.Object(
  {
    ...draftFields,
    audienceId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Preview for this audience of the page; none: the page without an audience',
      }),
    ),
  },
  { ...closed, $id: 'PagePreviewBody' },
);
export type PagePreviewBody = Static<typeof PagePreviewBody>;
