import { Type, type Static } from '@sinclair/typebox';
import { VERSION_ORIGINS, VERSION_STATUSES } from '../db/enums.js';
import { HttpUrl, LimitParam, ListQuery, MAX_SAFE_INTEGER, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';
import { Flags, Metadata, MetadataOverridePatch, MetadataPartial, NullableContent } from '../pages/index.js';
import { RoundTrip } from '../http/round-trip.js';
import { Rules, RulesInput } from './rules.js';

export const VersionStatus = StringEnum(VERSION_STATUSES);

export const AudienceVersion = Type.Object(
  {
    versionId: Type.String(),
    audienceId: Type.String(),
    versionNumber: Type.Integer({ minimum: 1, maximum: MAX_SAFE_INTEGER }),
    status: VersionStatus,
    isNewPageAgent: Type.Boolean(),
    supplementaryContext: Nullable(Type.String()),
    content: NullableContent("Extension. The audience's content; null: the page's"),
    origin: StringEnum(VERSION_ORIGINS, {
      description:
        'Extension. Where the content came from: `generated` by the page agent, or `written` by a person (content set through the API, the console or MCP; a draft whose content is patched becomes `written`). A page-wide regenerate skips an audience whose published or latest draft version is `written`',
    }),
    queueDurationMs: Nullable(Type.Number({ description: 'Milliseconds from queuedAt to leaving queued; null until then' })),
    createdAt: Timestamp,
    becameDraftAt: NullableTimestamp,
    queuedAt: NullableTimestamp,
    publishedAt: NullableTimestamp,
    cancelledAt: NullableTimestamp,
    obsoleteAt: NullableTimestamp,
    archivedAt: NullableTimestamp,
    failureReason: Nullable(
      Type.String({ description: 'Extension. Why the page agent gave up generating this version (it is then cancelled); null otherwise' }),
    ),
  },
  { $id: 'AudienceVersion' },
);
export type AudienceVersion = Static<typeof AudienceVersion>;

export const Audience = Type.Object(
  {
    audienceId: Type.String(),
    pageId: Type.String(),
    computedName: Type.String({ description: '"<person name> (<domain>)" for a linked person, else "Audience <n>"' }),
    customName: Nullable(Type.String()),
    effectiveName: Type.String({ description: 'customName when set, else computedName' }),
    status: VersionStatus,
    flags: Flags,
    isNewPageAgent: Type.Boolean(),
    latestVersion: AudienceVersion,
    publishedVersion: AudienceVersion,
    personId: Nullable(Type.String()),
    personRouteKey: Nullable(Type.String()),
    actionFormIdOverride: Nullable(Type.String()),
    actionFormInstructionsOverride: Nullable(Type.String()),
    actionUrlOverride: Nullable(Type.String()),
    supplementaryContext: Nullable(Type.String()),
    rules: Nullable(Rules),
    priority: Nullable(
      Type.Integer({ minimum: 0, maximum: 1000, description: "Extension. A segment's priority, higher first; null for other audiences" }),
    ),
    effectiveMetadata: Type.Optional(Metadata),
    metadataOverride: Type.Optional(MetadataPartial),
    archivedAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { $id: 'Audience' },
);
export type Audience = Static<typeof Audience>;

const CustomName = Type.String({ minLength: 1, maxLength: 255 });
/** A path segment of the page's `page_routing` links; unique among the page's live audiences. */
export const PersonRouteKey = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: "Unique among the page's audiences that are not archived",
});

const audienceFields = {
  customName: Type.Optional(Nullable(CustomName)),
  personId: Type.Optional(Nullable(Type.String({ minLength: 1, description: 'A person of the tenant' }))),
  personRouteKey: Type.Optional(Nullable(PersonRouteKey)),
  flags: Type.Optional(Flags),
  actionFormIdOverride: Type.Optional(Nullable(Type.String())),
  actionFormInstructionsOverride: Type.Optional(Nullable(Type.String())),
  actionUrlOverride: Type.Optional(Nullable(HttpUrl)),
  rules: Type.Optional(Nullable(RulesInput)),
  priority: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description: "A segment's priority, higher first (0 when left out or null); only with rules",
      }),
    ),
  ),
};

export const AudienceCreate = Type.Object(
  {
    ...audienceFields,
    isNewPageAgent: Type.Optional(Type.Boolean()),
    supplementaryContext: Type.Optional(Nullable(Type.String())),
    metadataOverride: Type.Optional(MetadataPartial),
  },
  { additionalProperties: false, $id: 'AudienceCreate' },
);
export type AudienceCreate = Static<typeof AudienceCreate>;

/** The audience's other fields as read (read-only), so a read can be sent back. */
export const AudienceUpdate = RoundTrip(
  Audience,
  Type.Object(
    { ...audienceFields, metadataOverride: Type.Optional(Nullable(MetadataOverridePatch)) },
    { additionalProperties: false, $id: 'AudienceUpdate' },
  ),
);
export type AudienceUpdate = Static<typeof AudienceUpdate>;

export const VersionCreate = Nullable(
  Type.Object(
    {
      supplementaryContext: Type.Optional(Nullable(Type.String())),
      isNewPageAgent: Type.Optional(Type.Boolean()),
      content: Type.Optional(NullableContent("The audience's content (null: the page's); absent: the latest version's")),
    },
    { additionalProperties: false, $id: 'AudienceVersionCreate' },
  ),
);
export type VersionCreate = Static<typeof VersionCreate>;

/** The statuses a PATCH moves a version to; its current status, sent back as read, changes nothing. */
export const VERSION_MOVES = ['pending', 'queued', 'processing', 'published'] as const;

/**
 * At least one of the two (as before content, a body without a status is 400); content first (the
 * version must be a draft), then the move; the version's other fields as read (read-only).
 */
export const VersionUpdate = RoundTrip(
  AudienceVersion,
  Type.Object(
    {
      status: Type.Optional(
        StringEnum(VERSION_STATUSES, {
          description: `${VERSION_MOVES.join(', ')} move the version; its current status (as read) changes nothing; any other is 400`,
        }),
      ),
      content: Type.Optional(NullableContent("Only while the version is draft (409 otherwise); null: the page's content")),
    },
    {
      additionalProperties: false,
      description: 'status, content or both: a body with neither is 400 naming both',
      $id: 'AudienceVersionUpdate',
    },
  ),
);
export type VersionUpdate = Static<typeof VersionUpdate>;

export const AudienceSearchItem = Type.Object(
  {
    audienceId: Type.String(),
    effectiveName: Type.String(),
    pageId: Type.String(),
    pageName: Type.String(),
  },
  { $id: 'AudienceSearchItem' },
);

export const AudienceSearchQuery = Type.Object(
  {
    query: Type.Optional(
      Type.String({ maxLength: 255, description: "Case-insensitive substring of the audience's effectiveName or its page's name" }),
    ),
    limit: Type.Optional(LimitParam),
  },
  { additionalProperties: false },
);
export type AudienceSearchQuery = Static<typeof AudienceSearchQuery>;

export const AudienceSearchPage = Type.Object(
  {
    items: Type.Array(AudienceSearchItem),
    hasMore: Type.Boolean(),
    nextCursor: Type.Null({ description: 'Search has no further pages: raise limit instead' }),
    totalCount: Nullable(
      Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'The number of matches up to 100; null when more match' }),
    ),
  },
  { $id: 'AudienceSearchList' },
);

export const PageAudienceParams = Type.Object({ page_id: Type.String(), audience_id: Type.String() });
export const VersionParams = Type.Object({ page_id: Type.String(), audience_id: Type.String(), version_id: Type.String() });
export const VersionListQuery = ListQuery({});
export type VersionListQuery = Static<typeof VersionListQuery>;

export const AUDIENCE_KINDS = ['segment', 'person', 'home'] as const;

export const AudienceListQuery = ListQuery({
  kind: Type.Optional(
    StringEnum(AUDIENCE_KINDS, {
      description: "Extension. Only segment audiences (with rules), a person's audiences, or the page's home audience",
    }),
  ),
  status: Type.Optional(
    StringEnum(VERSION_STATUSES, {
      description: 'Only audiences of this status (`archived`: only archived ones); without it, every audience that is not archived',
    }),
  ),
});
export type AudienceListQuery = Static<typeof AudienceListQuery>;
