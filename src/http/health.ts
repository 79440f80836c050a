import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';

/** `GET /healthz`: 200 when the database answers; no API key, not in the OpenAPI document. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthz',
    {
      schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => {
      await sql`select 1`.execute(app.db);
      return { status: 'ok' as const };
    },
  );
};
