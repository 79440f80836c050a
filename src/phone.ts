import { type CountryCode, isSupportedCountry, parseIncompletePhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js';

/** The reference's pattern: what the API stores and answers with. */
export const E164 = /^\+[1-9]\d{1,14}$/;

/** Longer than any number as people write it, with spaces, brackets and a national prefix. */
export const PHONE_INPUT_MAX = 64;
// The fewest digits a national number has in any country (Austria's shortest), per libphonenumber's metadata.
const FEWEST_DIGITS = 4;

/**
 * Whether a request's value can be a phone number at all, before the tenant's country is known:
 * E.164 as the reference writes it, or text with at least the digits of the shortest number. The
 * number itself is decided by `normalisePhone`. Registered as the JSON Schema format `phone`.
 */
export function isPhoneShaped(value: string): boolean {
  return E164.test(value) || parseIncompletePhoneNumber(value).replace('+', '').length >= FEWEST_DIGITS;
}

/** An ISO 3166-1 alpha-2 code libphonenumber has numbering rules for, uppercased; undefined otherwise. */
export function phoneCountry(code: string): CountryCode | undefined {
  const upper = code.toUpperCase();
  return isSupportedCountry(upper) ? upper : undefined;
}

export type NormalisedPhone = { ok: true; e164: string } | { ok: false; message: string };

/**
 * A phone number as people type it → E.164. A value already in the reference's pattern is taken as
 * it is (the reference allows it); anything else must be, as a whole, a possible number: in
 * international format, or national in `country` (the tenant's `defaultCountry`). An extension is
 * refused, since E.164 has no room for it and dropping it would lose what was typed.
 */
export function normalisePhone(value: string, country: string | null): NormalisedPhone {
  if (E164.test(value)) return { ok: true, e164: value };
  const defaultCountry = country === null ? undefined : phoneCountry(country);
  const international = value.trim().startsWith('+');
  const parsed = parsePhoneNumberFromString(value, { extract: false, ...(defaultCountry ? { defaultCountry } : {}) });
  if (!parsed?.isPossible() || !E164.test(parsed.number)) {
    if (!international && !defaultCountry) {
      return {
        ok: false,
        message:
          'is not a valid phone number without a country code: write it like +14155550100, or set defaultCountry in the site settings',
      };
    }
    return {
      ok: false,
      message: international || !defaultCountry ? 'is not a valid phone number' : `is not a valid phone number for ${defaultCountry}`,
    };
  }
  if (parsed.ext) return { ok: false, message: 'has an extension, which cannot be stored: give the number without it' };
  return { ok: true, e164: parsed.number };
}
