import type { FastifyInstance, FastifyReply } from 'fastify';
import { ok, type AdminOperation, type Answer, type KeyedOperation } from '../api/index.js';
import type { Services } from '../services.js';
import { principalOf, requireKey } from './auth.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Sends an api/ answer: the envelope around `data`, an envelope already made, or another body with its type. */
function send(reply: FastifyReply, answer: Answer) {
  if (answer.headers) reply.headers(answer.headers);
  // Text answers are the whole envelope already made (hot reads keep it between requests).
  if ('text' in answer) return reply.type('application/json; charset=utf-8').send(answer.text);
  if ('body' in answer) return reply.type(answer.type).send(answer.body);
  return ok(answer.data);
}

/** The JSON body cap of a route whose body is a few small fields (keys, webhooks, alerts, top-ups, Suno), whatever BODY_LIMIT_BYTES allows. */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * Mounts a keyed api/ operation at its spec's method and path: the key (scope and rate limit) is
 * checked first, before the body is read; the body is capped by route (createTask's by
 * BODY_LIMIT_BYTES, the others' by SMALL_BODY_BYTES too).
 */
export function mountKeyed(app: FastifyInstance, services: Services, op: KeyedOperation): void {
  const handle = op.handler(services);
  const limit = services.config.BODY_LIMIT_BYTES;
  app.route({
    method: op.spec.method.toUpperCase() as Method,
    url: op.spec.path,
    bodyLimit: op.spec.body === 'createTask' ? limit : Math.min(limit, SMALL_BODY_BYTES),
    config: { cors: 'keyed' },
    // The key is checked before any byte of the body is read (issue 39 finding 1).
    preParsing: requireKey(services, op.spec.scope),
    handler: async (req, reply) =>
      send(reply, await handle({ principal: principalOf(req), params: req.params, query: req.query, body: req.body, headers: req.headers })),
  });
}

/** Who made each admin request, set by the admin scope's auth hook (the versions of definitions record it). */
export const adminActors = new WeakMap<object, string>();

/** Mounts an admin api/ operation at its spec's method and path, in a scope whose hook checks ADMIN_TOKEN. */
export function mountAdmin(scope: FastifyInstance, services: Services, op: AdminOperation): void {
  scope.route({
    method: op.spec.method.toUpperCase() as Method,
    url: op.spec.path,
    handler: async (req, reply) => send(reply, await op.handle(services, { params: req.params, query: req.query, body: req.body, who: adminActors.get(req) })),
  });
}
