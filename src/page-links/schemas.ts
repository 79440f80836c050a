import { Type, type Static } from '@sinclair/typebox';
import { TARGET_TYPES } from '../db/enums.js';
import { ListQuery, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

export const TargetType = StringEnum(TARGET_TYPES);

/** What a link leads to, by `targetType`: an audience target names its audience, the others their page. */
export const PageLinkTarget = Type.Union(
  [
    Type.Object(
      {
        targetType: Type.Literal('audience'),
        audienceId: Type.String({ description: 'The audience shown (with its page)' }),
      },
      { $id: 'AudienceTarget' },
    ),
    Type.Object(
      {
        targetType: Type.Literal('page'),
        pageId: Type.String({ description: 'The page shown, without an audience' }),
      },
      { $id: 'PageTarget' },
    ),
    Type.Object(
      {
        targetType: Type.Literal('page_routing'),
        pageId: Type.String({ description: 'The page; `<path>/<personRouteKey>` shows it for the audience with that key' }),
      },
      { $id: 'PageRoutingTarget' },
    ),
  ],
  { discriminator: { propertyName: 'targetType' } },
);
export type PageLinkTarget = Static<typeof PageLinkTarget>;

export const PageLink = Type.Object(
  {
    pageLinkId: Type.String(),
    tenantDomainId: Type.String(),
    path: Type.String(),
    target: PageLinkTarget,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { $id: 'PageLink' },
);
export type PageLink = Static<typeof PageLink>;

const Path = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^/\\S*$',
  description: 'Starts with /, no whitespace; unique among the live links of its domain',
});
const Target = Type.Object(
  {
    targetType: TargetType,
    audienceId: Type.Optional(Type.String({ description: 'Required for audience targets, refused otherwise' })),
    pageId: Type.Optional(Type.String({ description: 'Required for page and page_routing targets, refused otherwise' })),
  },
  { additionalProperties: false },
);

export const PageLinkCreate = Type.Object(
  {
    path: Path,
    tenantDomainId: Type.Optional(Type.String({ description: "Defaults to the tenant's fallback domain" })),
    target: Target,
  },
  { additionalProperties: false, $id: 'PageLinkCreate' },
);
export type PageLinkCreate = Static<typeof PageLinkCreate>;

export const PageLinkUpdate = RoundTrip(
  PageLink,
  Type.Object(
    { path: Type.Optional(Path), target: Type.Optional(Target) },
    {
      additionalProperties: false,
      description: "The link stays on its domain; a new target replaces the old one whole; the link's other fields as read (read-only)",
      $id: 'PageLinkUpdate',
    },
  ),
);
export type PageLinkUpdate = Static<typeof PageLinkUpdate>;

export const PageLinkSearchQuery = ListQuery({
  query: Type.Optional(Type.String({ maxLength: 2048, description: 'Case-insensitive substring of the path' })),
  pageId: Type.Optional(Type.String({ description: 'Links to this page or to one of its audiences' })),
  targetType: Type.Optional(TargetType),
  tenantDomainId: Type.Optional(Type.String({ description: 'The custom domain; when omitted, the fallback domain' })),
});
export type PageLinkSearchQuery = Static<typeof PageLinkSearchQuery>;

export const PageLinkParams = Type.Object({ page_link_id: Type.String() });
