import type { FastifyError, FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { NOTIFY_PATH, upstreamNotice } from '../../engine/index.js';
import { failure, ok } from '../../api/index.js';

/** Largest completion notice accepted; providers send small JSON documents (the result itself is fetched by the adapter). */
export const NOTIFY_MAX_BYTES = 256 * 1024;
const TOKEN = /^[A-Za-z0-9_-]{20,64}$/;

/**
 * POST /upstream/v1/notify/<token>: an upstream's completion notice for one task (issue 8). The
 * unguessable token, stored with the task at hand-off, is the only credential; the body is not
 * trusted or even read: the notice only makes the task due now, and the engine's usual step asks
 * the upstream through the adapter, so a forged or repeated notice changes nothing. Unknown tokens
 * answer 404, and the answer never says anything about the task.
 */
export function registerUpstreamRoutes(app: FastifyInstance, services: Services) {
  const { database, clock, tasks } = services;
  app.register(async (scope) => {
    // Providers send JSON, forms or nothing; the body is discarded, only its size is limited.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: NOTIFY_MAX_BYTES }, (_req, _body, done) => done(null, null));
    scope.setErrorHandler((err: FastifyError, _req, reply) => {
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return reply.code(413).send(failure(413, 'payload_too_large', `a completion notice may be at most ${NOTIFY_MAX_BYTES} bytes`));
      }
      throw err;
    });
    scope.post(`${NOTIFY_PATH}:token`, { bodyLimit: NOTIFY_MAX_BYTES }, async (req, reply) => {
      const { token } = req.params as { token: string };
      const gone = () => reply.code(404).send(failure(404, 'not_found', 'no such notification address'));
      if (!TOKEN.test(token)) return gone();
      if (!(await upstreamNotice({ database, clock, signals: tasks.signals }, token))) return gone();
      return reply.send(ok(null));
    });
  });
}
