import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Nullable, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';
import { PHONE_INPUT_MAX } from '../phone.js';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Email = Type.String({ format: 'email', description: 'Must look like an email address' });
const Domain = Type.String({ minLength: 1 });
const PhoneNumber = Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'E.164, e.g. +14155550100' });
/**
 * A phone number as people type it: E.164 is taken as it is; anything else (`(415) 555-0100`,
 * `+44 20 7183 8750`) must be a possible number, national ones in the site settings'
 * `defaultCountry`, and is stored in E.164 (src/phone.ts). 400 at the field in words otherwise.
 */
const PhoneNumberInput = Type.String({
  format: 'phone',
  minLength: 1,
  maxLength: PHONE_INPUT_MAX,
  description:
    "E.164 (+14155550100), or as people type it: international (+44 20 7183 8750) or national in the site settings' defaultCountry ((415) 555-0100). Stored and answered in E.164.",
});
const LinkedinProfileUrl = Type.String({ minLength: 1 });

export const Person = Type.Object(
  {
    personId: Type.String({ minLength: 1 }),
    name: Type.String(),
    email: Nullable(Type.String()),
    domain: Nullable(Domain),
    slug: Type.String({ description: 'Derived from the name at creation, unique in the tenant; kept when the name changes' }),
    phoneNumber: Nullable(PhoneNumber),
    linkedinProfileUrl: Nullable(LinkedinProfileUrl),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Person' },
);
export type Person = Static<typeof Person>;

export const PersonCreate = Type.Object(
  {
    name: Name,
    email: Type.Optional(Email),
    domain: Type.Optional(Domain),
    phoneNumber: Type.Optional(PhoneNumberInput),
    linkedinProfileUrl: Type.Optional(LinkedinProfileUrl),
  },
  { additionalProperties: false, $id: 'PersonCreate' },
);
export type PersonCreate = Static<typeof PersonCreate>;

/** Every field optional; `null` clears a nullable field; an empty body changes nothing; the other fields as read (read-only). */
export const PersonUpdate = RoundTrip(
  Person,
  Type.Object(
    {
      name: Type.Optional(Name),
      email: Type.Optional(Nullable(Email)),
      domain: Type.Optional(Nullable(Domain)),
      phoneNumber: Type.Optional(Nullable(PhoneNumberInput)),
      linkedinProfileUrl: Type.Optional(Nullable(LinkedinProfileUrl)),
    },
    { additionalProperties: false, $id: 'PersonUpdate' },
  ),
);
export type PersonUpdate = Static<typeof PersonUpdate>;

export const PersonParams = Type.Object({ person_id: Type.String() });
export const PersonListQuery = ListQuery({});
export type PersonListQuery = Static<typeof PersonListQuery>;
export const PersonSearchQuery = ListQuery({
  query: Type.Optional(
    Type.String({ maxLength: 255, description: 'Case-insensitive (A-Z) substring of the name, the email or the domain' }),
  ),
});
export type PersonSearchQuery = Static<typeof PersonSearchQuery>;
