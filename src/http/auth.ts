import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, Scope } from '../accounts/index.js';
import type { Services } from '../services.js';
import { limitKey } from './limits.js';
import { requireSession, sessionPrincipal, sessionToken } from './session.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/**
 * A preParsing hook (so a wrong key costs no body read; issue 39 finding 1) that admits only a valid key with `scope`, counts it against the key's rate limit
 * and sets request.principal. A request without Authorization but with the session cookie is
 * admitted with its session (a change only with the session's CSRF token; decision 1903).
 */
export function requireKey(services: Services, scope: Scope) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const principal =
      req.headers.authorization === undefined && sessionToken(req) !== undefined
        ? sessionPrincipal(await requireSession(services, req), scope)
        : await services.auth.authenticate(req.headers.authorization, scope);
    await limitKey(services, reply, principal, scope);
    req.principal = principal;
  };
}

/** The principal set by requireKey (routes behind it can rely on it). */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error('route is missing requireKey');
  return req.principal;
}
