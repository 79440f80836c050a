import { createApiKey, createTenant, getTenant, listTenants, revokeApiKey } from './admin/repository.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';

const USAGE = `Usage: npm run admin -- <command>
  migrate                    apply pending migrations
  tenants create NAME        create a tenant and its first API key
  tenants list               list tenants (newest first)
  keys create TENANT_ID      create an API key for a tenant
  keys revoke KEY_ID         revoke an API key at once
Uses the same DATABASE_URL as the server. Prints JSON on stdout.`;

class UsageError extends Error {}

async function main(args: string[]): Promise<unknown> {
  const [group, action, ...rest] = args;
  const arg = rest.join(' ');
  const config = loadConfig();
  const db = openDatabase(config.database);
  try {
    const migrated = await migrateToLatest(db);
    const command = `${group ?? ''} ${action ?? ''}`.trim();
    switch (command) {
      case 'migrate':
        return { applied: (migrated.results ?? []).map((r) => r.migrationName) };
      case 'tenants create': {
        if (!arg) throw new UsageError('tenants create needs a NAME');
        return await db.kysely.transaction().execute(async (trx) => {
          const tenant = await createTenant(trx, arg, config.fallbackDomainSuffix);
          return { tenant, ...(await createApiKey(trx, tenant.tenantId)) };
        });
      }
      case 'tenants list':
        return await listTenants(db.kysely, { limit: 100 });
      case 'keys create': {
        if (!arg) throw new UsageError('keys create needs a TENANT_ID');
        if (!(await getTenant(db.kysely, arg))) throw new Error(`No tenant ${arg}`);
        return await createApiKey(db.kysely, arg);
      }
      case 'keys revoke': {
        if (!arg) throw new UsageError('keys revoke needs a KEY_ID');
        if (!(await revokeApiKey(db.kysely, arg))) throw new Error(`No API key ${arg}`);
        return { apiKeyId: arg, revoked: true };
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
