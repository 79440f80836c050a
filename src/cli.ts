import {
  checkKeyOptions,
  createApiKey,
  createTenant,
  getTenant,
  listApiKeys,
  listTenants,
  revokeApiKey,
  type KeyOptions,
  isScope,
} from './admin/index.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connection.js';
import { migrateDatabase } from './db/migrate.js';

const USAGE = `Usage: npm run admin -- <command>
  migrate                    apply pending migrations
  tenants create NAME        create a tenant and its first API key
  tenants list               list tenants (newest first)
  keys create TENANT_ID [--scopes read|read,write] [--expires-at ISO] [--rate N] [--burst N]
                             create an API key for a tenant
  keys list TENANT_ID        list a tenant's keys (prefix, scopes, expiry, limits, last use)
  keys revoke KEY_ID         revoke an API key at once
  persons erase PERSON_ID    erase a person and their data, as DELETE /v0/persons/{id} does
  domains verify DOMAIN_ID   verify a tenant's custom domain without its DNS record (the operator attests it)
Uses the same DATABASE_URL as the server. Prints JSON on stdout.`;

class UsageError extends Error {}

function keyFlags(flags: string[]): KeyOptions {
  const options: KeyOptions = {};
  let scopes: string[] | undefined;
  for (let i = 0; i < flags.length; i += 2) {
    const [flag, value] = [flags[i], flags[i + 1]];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '--scopes') scopes = value.split(',').map((s) => s.trim());
    else if (flag === '--expires-at') options.expiresAt = value;
    else if (flag === '--rate' && /^\d+$/.test(value)) options.rateLimitPerSecond = Number(value);
    else if (flag === '--burst' && /^\d+$/.test(value)) options.rateLimitBurst = Number(value);
    else throw new UsageError(`Unknown or invalid option ${flag} ${value}`);
  }
  if (scopes !== undefined) {
    if (!scopes.every(isScope)) throw new UsageError('--scopes takes read or read,write');
    options.scopes = scopes;
  }
  return options;
}

async function main(args: string[]): Promise<unknown> {
  const [group, action, ...rest] = args;
  const arg = rest.join(' ');
  const config = loadConfig();
  const migrated = await migrateDatabase(config.database);
  const db = openDatabase(config.database);
  try {
    const command = `${group ?? ''} ${action ?? ''}`.trim();
    switch (command) {
      case 'migrate':
        return { applied: (migrated.results ?? []).map((r) => r.migrationName) };
      case 'tenants create': {
        if (!arg) throw new UsageError('tenants create needs a NAME');
        return await db.kysely.transaction().execute(async (trx) => {
          const tenant = await createTenant(trx, arg, config.fallbackDomainSuffix);
          const { apiKey, apiKeyId } = await createApiKey(trx, tenant.tenantId);
          return { tenant, apiKey, apiKeyId }; // as POST /admin/tenants answers
        });
      }
      case 'tenants list':
        return await listTenants(db.kysely, { limit: 100 });
      case 'keys create': {
        const [tenantId, ...flags] = rest;
        if (!tenantId) throw new UsageError('keys create needs a TENANT_ID');
        const options = checkKeyOptions(keyFlags(flags));
        if (!(await getTenant(db.kysely, tenantId))) throw new Error(`No tenant ${tenantId}`);
        return await createApiKey(db.kysely, tenantId, options);
      }
      case 'keys list': {
        if (!arg) throw new UsageError('keys list needs a TENANT_ID');
        if (!(await getTenant(db.kysely, arg))) throw new Error(`No tenant ${arg}`);
        return await listApiKeys(db.kysely, arg, { limit: 100 });
      }
      case 'keys revoke': {
        if (!arg) throw new UsageError('keys revoke needs a KEY_ID');
        if (!(await revokeApiKey(db.kysely, arg))) throw new Error(`No API key ${arg}`);
        return { apiKeyId: arg, revoked: true };
      }
      case 'persons erase': {
        if (!arg) throw new UsageError('persons erase needs a PERSON_ID');
        // Imported here: the persons and leads areas are half of the CLI's start for the other commands.
        const [{ erasePerson, tenantOfPerson }, { forgetLeadsOf }] = await Promise.all([
          import('./persons/index.js'),
          import('./leads/index.js'),
        ]);
        const erased = await db.kysely.transaction().execute(async (trx) => {
          const tenantId = await tenantOfPerson(trx, arg);
          return tenantId !== undefined && (await erasePerson(trx, tenantId, arg, forgetLeadsOf));
        });
        if (!erased) throw new Error(`No person ${arg}`);
        return { personId: arg, erased: true };
      }
      case 'domains verify': {
        if (!arg) throw new UsageError('domains verify needs a DOMAIN_ID');
        const [{ attestDomain }, { deleteDomainLinks }] = await Promise.all([
          import('./domains/index.js'),
          import('./page-links/index.js'),
        ]);
        return await attestDomain(db.kysely, { dropLinks: deleteDomainLinks, routing: config.siteCnameTarget }, arg);
      }
      default:
        throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
    }
  } finally {
    await db.close();
  }
}

try {
  const output = await main(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(output)}\n`);
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const message = err instanceof ConfigError ? `Invalid configuration: ${err.message}` : err instanceof Error ? err.message : String(err);
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
