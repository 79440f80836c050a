import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { createGoal, deleteGoal, findGoal, listGoals, toGoal, updateGoal } from './repository.js';
import { Goal, GoalCreate, GoalListQuery, GoalParams, GoalUpdate } from './schemas.js';

const extension = { tags: ['goals'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const goalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/v0/goals',
    {
      schema: {
        ...extension,
        operationId: 'createGoal',
        headers: IdempotencyHeaders,
        summary: 'Create goal (extension)',
        description: 'What counts as the goal: docs/analytics.md, "Goals".',
        body: GoalCreate,
        response: responses({ 201: Goal }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createGoal(trx, request.tenantId, request.body))),
  );

  app.get(
    '/v0/goals/:goal_id',
    {
      schema: {
        ...extension,
        operationId: 'getGoal',
        summary: 'Get goal (extension)',
        params: GoalParams,
        response: responses({ 200: Goal }),
      },
    },
    async (request) => {
      const row = await findGoal(app.db, request.tenantId, request.params.goal_id);
      if (!row) throw notFound('Goal');
      return toGoal(row);
    },
  );

  app.get(
    '/v0/goals',
    {
      schema: {
        ...extension,
        operationId: 'listGoals',
        summary: 'List goals, newest first (extension)',
        querystring: GoalListQuery,
        response: responses({ 200: ListEnvelope(Goal) }),
      },
    },
    async (request) => listGoals(app.db, request.tenantId, request.query),
  );

  app.patch(
    '/v0/goals/:goal_id',
    {
      schema: {
        ...extension,
        operationId: 'updateGoal',
        summary: 'Update goal (extension)',
        params: GoalParams,
        body: GoalUpdate,
        response: responses({ 200: Goal }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const current = await findGoal(trx, request.tenantId, request.params.goal_id);
        if (!current) throw notFound('Goal');
        return updateGoal(trx, current, request.body);
      }),
  );

  app.delete(
    '/v0/goals/:goal_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteGoal',
        summary: 'Delete goal; what it counted stays (extension)',
        params: GoalParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findGoal(trx, request.tenantId, request.params.goal_id);
        if (!current) throw notFound('Goal');
        await deleteGoal(trx, current);
      });
      return reply.code(204).send(null);
    },
  );
};
