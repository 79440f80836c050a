import { fileUrlSecret } from '../../src/assets/files.js';
import { type DecisionClaims, decisionTokens, type DecisionTokens } from '../../src/onsite/decision-token.js';
import { createExperience } from '../../src/onsite/experiences-repository.js';
import type { ExperienceCreate } from '../../src/onsite/schemas.js';
import { createSite } from '../../src/onsite/sites-repository.js';
import { type Res, type TestApp, toRes } from '../helpers.js';

// What the measuring tests share: a site and experiences of a tenant (through the onsite
// repository), decision tokens signed as decide signs them, and reports posted as a beacon would.

export async function siteOf(t: TestApp, tenantId: string, origins: string[]): Promise<string> {
  const site = await t.app.db
    .transaction()
    .execute((trx) => createSite(trx, t.app.config.publicBaseUrl, tenantId, { name: 'Shop', origins }));
  return site.siteId;
}

export async function experienceOf(t: TestApp, tenantId: string, siteId: string, fields: Partial<ExperienceCreate> = {}): Promise<string> {
  const made = await t.app.db.transaction().execute((trx) =>
    createExperience(trx, tenantId, {
      siteId,
      name: 'Pricing headline',
      status: 'live',
      urlMatch: { type: 'exact', value: '/pricing' },
      changes: [{ selector: 'h1', action: 'text', value: 'Hello' }],
      ...fields,
    } as ExperienceCreate),
  );
  return made.experienceId;
}

export async function signerOf(t: TestApp): Promise<DecisionTokens> {
  return decisionTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
}

export const today = (): string => new Date().toISOString().slice(0, 10);

export function claimsOf(base: Pick<DecisionClaims, 'tenantId' | 'siteId'> & Partial<DecisionClaims>): DecisionClaims {
  return { unit: 'v:unit-1', day: today(), path: '/pricing', experiences: [], converting: [], issuedAt: Date.now(), ...base };
}

/** A report as `navigator.sendBeacon` sends it: text/plain, with the page's origin. */
export async function beacon(t: TestApp, body: unknown, origin: string | null, headers: Record<string, string> = {}): Promise<Res> {
  return toRes(
    await t.app.inject({
      method: 'POST',
      url: '/_pam/x',
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        ...(origin === null ? {} : { origin }),
        ...headers,
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}
