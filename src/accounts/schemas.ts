import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, StringEnum, Timestamp } from '../http/schemas.js';
import { idPattern } from '../ids.js';
import { RoundTrip } from '../http/round-trip.js';

export const AccountId = Type.String({ minLength: 1, pattern: idPattern('account') });

export const Account = Type.Object(
  {
    accountId: AccountId,
    domain: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    latestActivityAt: Timestamp,
    linkedPersonsCount: Type.Integer({
      minimum: 0,
      maximum: MAX_SAFE_INTEGER,
      description: 'Persons whose domain equals this domain, ignoring case',
    }),
  },
  { $id: 'Account' },
);
export type Account = Static<typeof Account>;

const AccountName = Type.String({ minLength: 1, maxLength: 255 });
const AccountDomain = Type.String({ minLength: 1, maxLength: 253, pattern: '^\\S+$', description: 'Unique in the tenant, ignoring case' });

export const AccountCreate = Type.Object(
  { name: AccountName, domain: AccountDomain },
  { additionalProperties: false, $id: 'AccountCreate' },
);
export type AccountCreate = Static<typeof AccountCreate>;

/** The account's other fields as read (read-only). */
export const AccountUpdate = RoundTrip(
  Account,
  Type.Object(
    { name: Type.Optional(AccountName), domain: Type.Optional(AccountDomain) },
    { additionalProperties: false, $id: 'AccountUpdate' },
  ),
);
export type AccountUpdate = Static<typeof AccountUpdate>;

export const AccountSearchQuery = ListQuery({
  query: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring of the name or the domain' })),
  includeEmptyOnly: Type.Optional(StringEnum(['true', 'false'], { description: 'true: only accounts with no linked person' })),
});
export type AccountSearchQuery = Static<typeof AccountSearchQuery>;

export const AccountParams = Type.Object({ account_id: AccountId });
