import { Type, type Static } from '@sinclair/typebox';
import { DEAL_SOURCES, DEAL_STAGES } from '../db/enums.js';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { idPattern } from '../ids.js';

export const DealId = Type.String({ minLength: 1, pattern: idPattern('deal') });

/** The largest amount a deal may have: its hundredths, summed over many deals, stay exact integers. */
export const MAX_AMOUNT = 1_000_000_000_000;
export const MAX_EXTERNAL_ID_LENGTH = 255;
export const MAX_NAME_LENGTH = 255;

const Source = StringEnum(DEAL_SOURCES, { description: 'Where the deal comes from: the API, or a CRM sync' });
const Stage = StringEnum(DEAL_STAGES, { description: 'open, won (closed won) or lost (closed lost)' });
const ExternalId = Type.String({
  minLength: 1,
  maxLength: MAX_EXTERNAL_ID_LENGTH,
  description: "The deal's id in its source; a deal is upserted by (source, externalId)",
});
const Name = Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH });
const Amount = Type.Number({ minimum: 0, maximum: MAX_AMOUNT, description: 'Non-negative, at most 2 decimals' });
const Currency = Type.String({ minLength: 3, maxLength: 3, description: 'ISO 4217 code, upper case, e.g. EUR' });
const AccountIdField = Type.String({ minLength: 1, maxLength: 64, description: "One of the tenant's accounts" });
const AccountDomain = Type.String({
  minLength: 1,
  maxLength: 253,
  description:
    "A host name (acme.com: no scheme, port, path or IP address), matched to the tenant's account with this domain, case-insensitively",
});
const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const Deal = Type.Object(
  {
    dealId: DealId,
    source: Source,
    externalId: Type.String(),
    name: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
    stage: Stage,
    accountId: Nullable(Type.String({ description: 'The matched account; null when none matched' })),
    accountDomain: Nullable(Type.String({ description: 'The domain the deal named, as given' })),
    matched: Type.Boolean({ description: 'Whether the deal is matched to one of the tenant’s accounts' }),
    createdAt: Timestamp,
    closedAt: Nullable(Timestamp),
    updatedAt: Timestamp,
  },
  { $id: 'Deal' },
);
export type Deal = Static<typeof Deal>;

/** What `POST /v0/deals` takes, and what a CRM sync hands to `upsertDeal`. */
export const DealInput = Type.Object(
  {
    source: Source,
    externalId: ExternalId,
    name: Name,
    amount: Amount,
    currency: Currency,
    stage: Stage,
    accountId: Type.Optional(Nullable(AccountIdField)),
    accountDomain: Type.Optional(Nullable(AccountDomain)),
    createdAt: DateTime("The deal's creation in its source: what the pipeline report's range and window use"),
    closedAt: Type.Optional(Nullable(DateTime('When the deal was won or lost: at or after createdAt'))),
  },
  { additionalProperties: false, $id: 'DealInput' },
);
export type DealInput = Static<typeof DealInput>;

export const DealListQuery = ListQuery({
  source: Type.Optional(Source),
  stage: Type.Optional(Stage),
  accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only deals matched to this account' })),
  startDate: Type.Optional(DateTime('Deals created at or after this instant')),
  endDate: Type.Optional(DateTime('Deals created before this instant')),
});
export type DealListQuery = Static<typeof DealListQuery>;

export const DealParams = Type.Object({ deal_id: DealId });
