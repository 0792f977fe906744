import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionInfo } from '../../members/index.js';
import { AUTH_OPERATIONS, type AuthOperation } from '../../api/index.js';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { clearSessionCookie, clientMeta, requireSession, setSessionCookie } from '../session.js';

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * Members and sign-in (/api/v1/auth/*; decision 1903). An operation that needs a session reads
 * it from the cookie (a change only with its CSRF token), checks the role it needs, and the
 * answer may set or clear the session cookie. Answers are never cached.
 */
export function registerAuthRoutes(app: FastifyInstance, services: Services) {
  void services.members.prepare();
  for (const op of AUTH_OPERATIONS) mountAuth(app, services, op);
}

/** The JSON body cap of every /api/v1/auth operation: a few short fields. */
export const AUTH_BODY_BYTES = 16 * 1024;

function mountAuth(app: FastifyInstance, services: Services, op: AuthOperation): void {
  const sessions = new WeakMap<FastifyRequest, SessionInfo>();
  app.route({
    method: op.spec.method.toUpperCase() as Method,
    url: op.spec.path,
    bodyLimit: Math.min(services.config.BODY_LIMIT_BYTES, AUTH_BODY_BYTES),
    // The session and role are checked before the body is read (issue 39 finding 1).
    preParsing: async (req, reply) => {
      reply.header('cache-control', 'no-store');
      if (op.needs === 'none') return;
      const session = await requireSession(services, req);
      if (op.needs !== 'any' && !session.member) {
        throw Errors.forbidden('this needs a member signed in with email and password (this session was opened with an API key)');
      }
      if (op.needs === 'owner' && session.member!.role === 'member') {
        throw Errors.forbidden(`only an owner of the account manages its members (you are ${session.member!.email}, role member)`);
      }
      sessions.set(req, session);
    },
    handler: async (req, reply) => {
      const session = sessions.get(req) ?? null;
      const answer = await op.handle(services, { session, params: req.params, body: req.body, meta: clientMeta(req) });
      if (answer.signedIn) setSessionCookie(services, req, reply, answer.signedIn.token, answer.signedIn.expiresAt);
      if (answer.signedOut) clearSessionCookie(services, req, reply);
      const status = answer.status ?? 200;
      return reply.code(status).send({ code: status, msg: 'success', data: answer.data });
    },
  });
}
