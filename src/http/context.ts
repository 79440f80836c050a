import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';

// What every route can reach: the database and the configuration (decorated once in app.ts),
// and, on /v0 routes, the caller's API key and its tenant (set by the auth hook).
declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>;
    config: Config;
  }
  interface FastifyRequest {
    tenantId: string;
    apiKeyId: string;
  }
}
