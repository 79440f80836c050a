import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { AppError } from './errors.js';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Resolves `x-api-key` to its tenant on every /v0 request; the key itself is never logged. */
export function apiKeyAuth(db: Kysely<Database>): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') {
      throw new AppError('unauthorized', 'Send your API key in the x-api-key header');
    }
    const row = key.length > 512 ? undefined : await db
      .selectFrom('api_keys')
      .select('tenant_id')
      .where('key_hash', '=', hashApiKey(key))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw new AppError('unauthorized', 'The API key is unknown or revoked');
    request.tenantId = row.tenant_id;
  };
}

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time (hashing first evens out the lengths). */
export function adminAuth(adminToken: string): onRequestAsyncHookHandler {
  const expected = createHash('sha256').update(adminToken).digest();
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    const given = createHash('sha256').update(match?.[1] ?? '').digest();
    if (!match || !timingSafeEqual(given, expected)) {
      throw new AppError('unauthorized', 'Send the admin token as Authorization: Bearer <ADMIN_TOKEN>', undefined, {
        'www-authenticate': 'Bearer realm="admin"',
      });
    }
  };
}
