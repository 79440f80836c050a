import { Type, type Static } from '@sinclair/typebox';
import { AccountId } from '../accounts/index.js';
import { ListQuery, Nullable, NullableTimestamp, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

const Kebab = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
const IdempotencyKey = Type.String({ minLength: 1, maxLength: 255 });
const Payload = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'Any JSON object' });

export const LogCreate = Type.Object(
  {
    source: Kebab,
    type: Kebab,
    payload: Payload,
    idempotencyKey: Type.Optional(Nullable(IdempotencyKey)),
  },
  { additionalProperties: false, $id: 'LogCreate' },
);
export type LogCreate = Static<typeof LogCreate>;

const logFields = {
  source: Kebab,
  type: Kebab,
  payload: Payload,
  idempotencyKey: Nullable(IdempotencyKey),
  createdAt: Timestamp,
  updatedAt: NullableTimestamp,
  deletedAt: NullableTimestamp,
};

export const PersonLog = Type.Object(
  {
    personId: Type.String({ minLength: 1 }),
    personLogId: Type.String({ minLength: 1 }),
    ...logFields,
  },
  { $id: 'PersonLog' },
);
export type PersonLog = Static<typeof PersonLog>;

export const AccountLog = Type.Object(
  {
    accountId: AccountId,
    accountLogId: Type.String({ minLength: 1 }),
    ...logFields,
  },
  { $id: 'AccountLog' },
);
export type AccountLog = Static<typeof AccountLog>;

const logUpdate = ($id: string) => Type.Object({ payload: Payload }, { additionalProperties: false, $id });
/** The new payload; the entry's other fields as read (read-only). */
export const PersonLogUpdate = RoundTrip(PersonLog, logUpdate('PersonLogUpdate'));
export const AccountLogUpdate = RoundTrip(AccountLog, logUpdate('AccountLogUpdate'));

export const LogListQuery = ListQuery({
  source: Type.Optional(Kebab),
  type: Type.Optional(Kebab),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries created at or after this instant (RFC 3339)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Entries created before this instant (RFC 3339)' })),
  includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Deleted entries too' })),
});
export type LogListQuery = Static<typeof LogListQuery>;

export const PersonLogParams = Type.Object({ person_id: Type.String(), person_log_id: Type.String() });
export const AccountLogParams = Type.Object({ account_id: AccountId, account_log_id: Type.String() });
