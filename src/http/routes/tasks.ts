import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { readIdempotencyKey } from '../../tasks/index.js';
import { ok, okJson } from '../envelope.js';
import { principalOf, requireKey } from '../auth.js';
import { parseListQuery } from '../requests.js';

/** POST /jobs/createTask, GET /jobs/recordInfo, GET /jobs/list (SPEC endpoints 1–3). */
export function registerTaskRoutes(app: FastifyInstance, services: Services) {
  const { tasks } = services;

  app.post('/api/v1/jobs/createTask', { preHandler: requireKey(services, 'tasks:write') }, async (req, reply) => {
    const key = readIdempotencyKey(req.headers['idempotency-key']);
    const created = await tasks.create(principalOf(req), req.body, key);
    if (created.replayed) reply.header('idempotent-replayed', 'true');
    return ok({ taskId: created.taskId, task_id: created.taskId, status: 'submitted' });
  });

  app.get('/api/v1/jobs/recordInfo', { preHandler: requireKey(services, 'tasks:read') }, async (req, reply) => {
    const taskId = (req.query as Record<string, unknown>).taskId;
    if (taskId === undefined || taskId === '') throw Errors.missingField('taskId', 'pass ?taskId=<the taskId createTask returned>');
    if (typeof taskId !== 'string') throw Errors.invalid(`taskId must be given once (got ${JSON.stringify(taskId)})`);
    // The view is JSON text already (often kept from an earlier read): sent in the envelope as is.
    const json = await tasks.viewJson(principalOf(req).accountId, taskId);
    return reply.type('application/json; charset=utf-8').send(okJson(json));
  });

  app.get('/api/v1/jobs/list', { preHandler: requireKey(services, 'tasks:read') }, async (req) => {
    return ok(await tasks.list(principalOf(req).accountId, parseListQuery(req.query)));
  });
}
