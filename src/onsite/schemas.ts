import { Type, type Static } from '@sinclair/typebox';
import { Rules, RulesInput } from '../audiences/index.js';
import { EXPERIENCE_STATUSES, URL_MATCH_TYPES } from '../db/enums.js';
import { RoundTrip } from '../http/round-trip.js';
import { ListQuery, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';
import { idPattern } from '../ids.js';
import { ChangeSchema, ChangesInput } from './changes.js';
import { MAX_PATTERN_LENGTH } from './url-match.js';

export const SiteId = Type.String({ minLength: 1, pattern: idPattern('site') });
export const ExperienceId = Type.String({ minLength: 1, pattern: idPattern('experience') });

export const MAX_ORIGINS = 20;
export const MAX_PRIORITY = 1000;
export const MAX_HOLDOUT_PERCENT = 90;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Origins = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: 300,
    description:
      'scheme://host[:port], without path: https, or http for localhost, *.localhost and 127.0.0.1. Stored lowercased, without a default port',
  }),
  { minItems: 1, maxItems: MAX_ORIGINS, description: '1–20 origins the script runs on; a bad or repeated one is 400 at /origins/{i}' },
);

export const Site = Type.Object(
  {
    siteId: SiteId,
    name: Type.String(),
    origins: Type.Array(Type.String()),
    siteKey: Type.String({ description: 'Public (it is in the snippet): says which site, and nothing else' }),
    snippet: Type.String({ description: 'The exact HTML to paste into the head of every page of the site' }),
    lastSeenAt: {
      ...NullableTimestamp,
      description: 'The last time the script ran on one of the origins (to the minute); null: never, so not installed',
    },
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Site' },
);
export type Site = Static<typeof Site>;

export const SiteCreate = Type.Object({ name: Name, origins: Origins }, { additionalProperties: false, $id: 'SiteCreate' });
export type SiteCreate = Static<typeof SiteCreate>;

export const SiteUpdate = RoundTrip(
  Site,
  Type.Object({ name: Type.Optional(Name), origins: Type.Optional(Origins) }, { additionalProperties: false, $id: 'SiteUpdate' }),
  { ignored: ['lastSeenAt'] },
);
export type SiteUpdate = Static<typeof SiteUpdate>;

export const SiteListQuery = ListQuery({});
export type SiteListQuery = Static<typeof SiteListQuery>;
export const SiteParams = Type.Object({ site_id: SiteId });

export const UrlMatchSchema = Type.Object(
  {
    type: StringEnum(URL_MATCH_TYPES, {
      description:
        'exact: the path (a trailing slash more or less is the same page); prefix: the path and everything under it, by whole segments; glob: the whole path, * within a segment, ** across',
    }),
    value: Type.String({
      minLength: 1,
      maxLength: MAX_PATTERN_LENGTH,
      description: 'A path starting with / (no query, no fragment; case-sensitive); * only in a glob',
    }),
  },
  { additionalProperties: false, $id: 'UrlMatch' },
);

const Priority = Type.Integer({
  minimum: 0,
  maximum: MAX_PRIORITY,
  description:
    'Higher first: of the live experiences whose URL and rules match, the highest applies (and others whose selectors do not overlap)',
});
const HoldoutPercent = Type.Integer({
  minimum: 0,
  maximum: MAX_HOLDOUT_PERCENT,
  description: 'The share of matching visitors (by daily visitor) who see the page unchanged, to measure against',
});
const ConversionUrl = Nullable(
  Type.String({
    minLength: 1,
    maxLength: MAX_PATTERN_LENGTH,
    description: "A path pattern, a glob's syntax (a plain path is that page): the same visitor reaching it that day is a conversion",
  }),
);
const ExperienceStatus = StringEnum(EXPERIENCE_STATUSES, { description: 'Only live experiences are applied' });

export const Experience = Type.Object(
  {
    experienceId: ExperienceId,
    siteId: SiteId,
    name: Type.String(),
    status: ExperienceStatus,
    urlMatch: UrlMatchSchema,
    rules: Nullable(Rules),
    priority: Type.Integer(),
    holdoutPercent: Type.Integer(),
    conversionUrl: Nullable(Type.String()),
    changes: Type.Array(ChangeSchema),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Experience' },
);
export type Experience = Static<typeof Experience>;

const experienceFields = {
  name: Name,
  status: ExperienceStatus,
  urlMatch: UrlMatchSchema,
  rules: Nullable(RulesInput),
  priority: Priority,
  holdoutPercent: HoldoutPercent,
  conversionUrl: ConversionUrl,
  changes: ChangesInput,
};

export const ExperienceCreate = Type.Object(
  {
    siteId: Type.String({ minLength: 1, maxLength: 64, description: 'A site of the tenant (400 here otherwise)' }),
    name: experienceFields.name,
    status: Type.Optional({ ...experienceFields.status, default: 'draft' }),
    urlMatch: experienceFields.urlMatch,
    rules: Type.Optional(experienceFields.rules),
    priority: Type.Optional({ ...Priority, default: 0 }),
    holdoutPercent: Type.Optional({ ...HoldoutPercent, default: 0 }),
    conversionUrl: Type.Optional(experienceFields.conversionUrl),
    changes: experienceFields.changes,
  },
  { additionalProperties: false, $id: 'ExperienceCreate' },
);
export type ExperienceCreate = Static<typeof ExperienceCreate>;

export const ExperienceUpdate = RoundTrip(
  Experience,
  Type.Object(
    {
      name: Type.Optional(experienceFields.name),
      status: Type.Optional(experienceFields.status),
      urlMatch: Type.Optional(experienceFields.urlMatch),
      rules: Type.Optional(experienceFields.rules),
      priority: Type.Optional(experienceFields.priority),
      holdoutPercent: Type.Optional(experienceFields.holdoutPercent),
      conversionUrl: Type.Optional(experienceFields.conversionUrl),
      changes: Type.Optional(experienceFields.changes),
    },
    { additionalProperties: false, $id: 'ExperienceUpdate' },
  ),
);
export type ExperienceUpdate = Static<typeof ExperienceUpdate>;

export const ExperienceListQuery = ListQuery({
  siteId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this site's experiences" })),
  status: Type.Optional(StringEnum(EXPERIENCE_STATUSES, { description: 'Only experiences of this status' })),
});
export type ExperienceListQuery = Static<typeof ExperienceListQuery>;
export const ExperienceParams = Type.Object({ experience_id: ExperienceId });
