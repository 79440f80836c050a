import { Type, type Static } from '@sinclair/typebox';
import { PAGE_STATUSES, PAGE_TYPES } from '../db/enums.js';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';

export const PageType = StringEnum(PAGE_TYPES);
export const PageStatus = StringEnum(PAGE_STATUSES);
/** Pages and audiences share the one flag the reference allows. */
export const Flags = Type.Array(StringEnum(['home_page']), { uniqueItems: true });

const closed = { additionalProperties: false } as const;

/** Every Metadata field; responses carry all of them (unset strings as "", unset arrays as []). */
export const Metadata = Type.Object(
  {
    title: Type.String(),
    description: Type.String(),
    keywords: Type.Array(Type.String()),
    author: Type.String(),
    robots: Type.Array(Type.String()),
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
  },
  { $id: 'Metadata' },
);
export type Metadata = Static<typeof Metadata>;

/** The image fields are set by the service, never by a page request (400 naming them). */
export const METADATA_IMAGE_FIELDS = ['ogImageUrl', 'ogImageFileId', 'twitterImageUrl', 'twitterImageFileId'] as const;
export const MetadataInput = Type.Omit(Type.Partial(Metadata), METADATA_IMAGE_FIELDS, closed);
/** Any subset of Metadata's fields, laid over the page's metadata. */
export const MetadataPartial = Type.Partial(Metadata, closed);
export type MetadataPartial = Static<typeof MetadataPartial>;

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
    buttonTitle: Type.String(),
    actionType: Type.String({ minLength: 1, description: 'Any non-empty string; stored as given' }),
    url: Type.String(),
  },
  closed,
);
export type ActionInput = Static<typeof ActionInput>;

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

/** What the page shows; `headline`, `subheadline`, `heading` and `body` take personalisation tokens, `body` is Markdown. */
export const Content = Type.Object(
  {
    headline: Type.String({ maxLength: 200 }),
    subheadline: Type.String({ maxLength: 500 }),
    sections: Type.Array(
      Type.Object({ heading: Type.String({ maxLength: 200 }), body: Type.String({ maxLength: 20_000, description: 'Markdown' }) }, closed),
      { maxItems: 50 },
    ),
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

const Name = Type.String({ minLength: 1 });
const PageContext = Type.String({ minLength: 1 });
const HeaderActionId = Nullable(Type.String({ description: "The actionId of one of the page's actions; null clears it" }));

/** Every field optional; a present field replaces the stored value (arrays and metadata whole). */
export const PageUpdate = Type.Object(
  {
    actions: Type.Optional(Type.Array(ActionInput)),
    actionCardWidgets: Type.Optional(Type.Array(ActionCardWidget)),
    brandId: Type.Optional(Type.String()),
    footerLinks: Type.Optional(Type.Array(FooterLinkGroup)),
    headerActionId: Type.Optional(HeaderActionId),
    metadata: Type.Optional(MetadataInput),
    content: Type.Optional(NullableContent('Extension; null goes back to the default made from the title')),
    name: Type.Optional(Name),
    pageContext: Type.Optional(PageContext),
    pageType: Type.Optional(PageType),
    scripts: Type.Optional(Type.Array(Script)),
    status: Type.Optional(PageStatus),
  },
  { ...closed, $id: 'PageUpdate' },
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
  },
  { ...closed, $id: 'PageCreate' },
);
export type PageCreate = Static<typeof PageCreate>;

export const PageParams = Type.Object({ page_id: Type.String() });
export const PageListQuery = ListQuery({});
export const PagePreviewQuery = Type.Object(
  {
    audienceId: Type.Optional(
      Type.String({ minLength: 1, description: 'Preview for this audience of the page; none: the page without an audience' }),
    ),
  },
  { additionalProperties: false },
);
export type PageListQuery = Static<typeof PageListQuery>;
