import net from 'node:net';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sql, type Kysely } from 'kysely';
import { isHostname } from '../config.js';
import type { Database } from '../db/types.js';
import { invalidField, notFound } from '../http/errors.js';
import { type HostnameRules, isIpLiteral } from './hostnames.js';

/** A DNS name (253), its trailing dot and a `:65535` port. */
const MAX_DOMAIN_CHARS = 260;

const TlsAskQuery = Type.Object(
  { domain: Type.String({ minLength: 1, maxLength: MAX_DOMAIN_CHARS, description: 'The name a TLS client asked for (SNI)' }) },
  { additionalProperties: false },
);

/** Whether visitors are served on `hostname` (lowercase, no port, no trailing dot): a verified domain. */
export async function isServedHostname(db: Kysely<Database>, hostname: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_domains')
    .select('id')
    .where('hostname', '=', hostname)
    // Literal, so the partial unique index of verified names answers it.
    .where(sql<boolean>`status = 'verified'`)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * What the proxy's `domain` names: a DNS name, an IP literal (never given a certificate: an ACME
 * CA would refuse it, and a local one must not be led to issue one), or nothing valid.
 */
function askedName(domain: string): { hostname: string } | { ip: true } | undefined {
  const bracketed = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(domain);
  if (bracketed) return isIpLiteral(bracketed[1] ?? '') ? { ip: true } : undefined;
  if (net.isIP(domain) !== 0) return { ip: true };
  const name = domain
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (name.includes(':')) return undefined;
  if (isIpLiteral(name)) return { ip: true };
  return isHostname(name) ? { hostname: name } : undefined;
}

/**
 * `GET /_pam/tls/ask?domain=<host>`: the URL Caddy's on-demand TLS asks before it gets a
 * certificate for a name (docs/publishing.md). 200 only for the hosts visitors are served on; the
 * API's own host, `localhost` and IP literals never, whatever the table holds, so no certificate is
 * ever issued for them through this door. On the API's host only (a tenant domain's paths go to
 * the visitor plane), without a key (the proxy has none), and out of the OpenAPI document: it is
 * the proxy's, not the tenants'.
 */
export const tlsAskRoutes: FastifyPluginAsyncTypebox<{ rules: HostnameRules }> = async (app, { rules }) => {
  app.get(
    '/_pam/tls/ask',
    { schema: { hide: true, querystring: TlsAskQuery, response: { 200: Type.Object({ domain: Type.String() }) } } },
    async (request) => {
      const asked = askedName(request.query.domain);
      if (asked === undefined) throw invalidField('/domain', 'is not a DNS name');
      if ('ip' in asked || rules.isApiHost(asked.hostname)) throw notFound('Domain');
      if (!(await isServedHostname(app.db, asked.hostname))) throw notFound('Domain');
      return { domain: asked.hostname };
    },
  );
};
