import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { livePage } from '../pages/index.js';
import { concludeExperiment } from './conclusion.js';
import {
  createExperiment,
  deleteExperiment,
  experimentOf,
  listExperiments,
  startExperiment,
  toExperiment,
  updateExperiment,
} from './repository.js';
import { experimentResults } from './results.js';
import { findGoal } from '../goals/index.js';
import {
  Experiment,
  ExperimentConclude,
  ExperimentCreate,
  ExperimentListQuery,
  ExperimentParams,
  ExperimentResults,
  ExperimentResultsQuery,
  ExperimentUpdate,
  PageParams,
} from './schemas.js';

const tags = ['experiments'];
const extension = { tags, 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const experimentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const base = '/v0/pages/:page_id/experiments';
  const one = `${base}/:experiment_id`;

  app.post(
    base,
    {
      schema: {
        ...extension,
        operationId: 'createExperiment',
        summary: "Create an experiment on a page: a holdout, or a test between an audience's versions (extension)",
        headers: IdempotencyHeaders,
        params: PageParams,
        body: ExperimentCreate,
        response: responses({ 201: Experiment }),
      },
    },
    async (request, reply) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      return sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createExperiment(trx, page, request.body)));
    },
  );

  app.get(
    base,
    {
      schema: {
        ...extension,
        operationId: 'listExperiments',
        summary: "List a page's experiments, newest first (extension)",
        params: PageParams,
        querystring: ExperimentListQuery,
        response: responses({ 200: ListEnvelope(Experiment) }),
      },
    },
    async (request) => listExperiments(app.db, await livePage(app.db, request.tenantId, request.params.page_id), request.query),
  );

  app.get(
    one,
    {
      schema: {
        ...extension,
        operationId: 'getExperiment',
        summary: 'Get an experiment (extension)',
        params: ExperimentParams,
        response: responses({ 200: Experiment }),
      },
    },
    async (request) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      return toExperiment(await experimentOf(app.db, page, request.params.experiment_id));
    },
  );

  app.patch(
    one,
    {
      schema: {
        ...extension,
        operationId: 'updateExperiment',
        summary: 'Rename an experiment or change its weights, while draft or running (a new period of its results) (extension)',
        params: ExperimentParams,
        body: ExperimentUpdate,
        response: responses({ 200: Experiment }),
      },
    },
    async (request) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      return app.db.transaction().execute(async (trx) => {
        const current = await experimentOf(trx, page, request.params.experiment_id);
        return updateExperiment(trx, current, request.body);
      });
    },
  );

  app.delete(
    one,
    {
      schema: {
        ...extension,
        operationId: 'deleteExperiment',
        summary: 'Delete a draft experiment (extension)',
        params: ExperimentParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      await app.db.transaction().execute(async (trx) => deleteExperiment(trx, await experimentOf(trx, page, request.params.experiment_id)));
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${one}/start`,
    {
      schema: {
        ...extension,
        operationId: 'startExperiment',
        summary: 'Start a draft experiment: its arms are served from the next request (extension)',
        headers: IdempotencyHeaders,
        params: ExperimentParams,
        response: responses({ 200: Experiment }),
      },
    },
    async (request, reply) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      const result = await createOnce(app.db, fromHeader(request, 200), async (trx) =>
        startExperiment(trx, page, await experimentOf(trx, page, request.params.experiment_id)),
      );
      return sendOnce(reply, result);
    },
  );

  app.post(
    `${one}/conclude`,
    {
      schema: {
        ...extension,
        operationId: 'concludeExperiment',
        summary: 'Conclude a running experiment with the arm that stays (a versions experiment publishes its version) (extension)',
        headers: IdempotencyHeaders,
        params: ExperimentParams,
        body: ExperimentConclude,
        response: responses({ 200: Experiment }),
      },
    },
    async (request, reply) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      const result = await createOnce(app.db, fromHeader(request, 200), async (trx) =>
        concludeExperiment(trx, page, await experimentOf(trx, page, request.params.experiment_id), request.body.winner),
      );
      return sendOnce(reply, result);
    },
  );

  app.get(
    `${one}/results`,
    {
      schema: {
        ...extension,
        operationId: 'getExperimentResults',
        summary: 'Results so far: per arm, with anytime-valid p-values and intervals, the sample-ratio check and the decision (extension)',
        params: ExperimentParams,
        querystring: ExperimentResultsQuery,
        response: responses({ 200: ExperimentResults }),
      },
    },
    async (request) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      const experiment = await experimentOf(app.db, page, request.params.experiment_id);
      const { goalId } = request.query;
      if (goalId === undefined) return experimentResults(app.db, experiment);
      const goal = await findGoal(app.db, request.tenantId, goalId);
      if (!goal) throw notFound('Goal');
      return experimentResults(app.db, experiment, { goalId, target: { kind: goal.kind, target: goal.target, pageId: goal.page_id } });
    },
  );
};
