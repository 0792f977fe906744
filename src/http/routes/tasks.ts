import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { STATES, readIdempotencyKey } from '../../tasks/index.js';
import { ok } from '../envelope.js';
import { principalOf, requireKey } from '../auth.js';
import { parseWith } from '../validate.js';

const wholeText = (min: number, max: number) =>
  z.union([z.number(), z.string().regex(/^\d{1,16}$/, `must be a whole number from ${min} to ${max}`)]).transform(Number).pipe(z.number().int().min(min).max(max));

/** SPEC endpoint 3 query. */
const listQuery = z.object({
  limit: wholeText(1, 100).default(20),
  state: z.enum(STATES as [string, ...string[]]).optional(),
  before: wholeText(1, Number.MAX_SAFE_INTEGER).optional(),
});

/** POST /jobs/createTask, GET /jobs/recordInfo, GET /jobs/list (SPEC endpoints 1–3). */
export function registerTaskRoutes(app: FastifyInstance, services: Services) {
  const { tasks } = services;

  app.post('/api/v1/jobs/createTask', { preHandler: requireKey(services, 'tasks:write') }, async (req, reply) => {
    const key = readIdempotencyKey(req.headers['idempotency-key']);
    const created = await tasks.create(principalOf(req), req.body, key);
    if (created.replayed) reply.header('idempotent-replayed', 'true');
    return ok({ taskId: created.taskId, task_id: created.taskId, status: 'submitted' });
  });

  app.get('/api/v1/jobs/recordInfo', { preHandler: requireKey(services, 'tasks:read') }, async (req) => {
    const taskId = (req.query as Record<string, unknown>).taskId;
    if (taskId === undefined || taskId === '') throw Errors.missingField('taskId', 'pass ?taskId=<the taskId createTask returned>');
    if (typeof taskId !== 'string') throw Errors.invalid(`taskId must be given once (got ${JSON.stringify(taskId)})`);
    return ok(await tasks.get(principalOf(req).accountId, taskId));
  });

  app.get('/api/v1/jobs/list', { preHandler: requireKey(services, 'tasks:read') }, async (req) => {
    const q = parseWith(listQuery, req.query, '');
    return ok(await tasks.list(principalOf(req).accountId, { limit: q.limit, ...(q.state ? { state: q.state as never } : {}), ...(q.before !== undefined ? { before: q.before } : {}) }));
  });
}
