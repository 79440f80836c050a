import { createRequire } from 'node:module';

/**
 * The domains of free and common mail services (gmail.com, outlook.com, gmx.de, ...), from the
 * maintained `email-providers` package, never a list written here. Exact names only: the package
 * also lists a few shared suffixes (com.ar), whose every subdomain is not a mail service.
 */
const FREE_MAIL: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)('email-providers/all.json') as string[]).map((d) => d.toLowerCase()),
);

/** Whether an email domain is a mail service's rather than a company's: such a domain names no company. */
export const isFreeMailDomain = (domain: string): boolean => FREE_MAIL.has(domain.toLowerCase());
