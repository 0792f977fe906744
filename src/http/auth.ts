import type { FastifyRequest } from 'fastify';
import type { Principal, Scope } from '../accounts/index.js';
import type { Services } from '../services.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** A preHandler that admits only a valid key with `scope` and sets request.principal. */
export function requireKey(services: Services, scope: Scope) {
  return async (req: FastifyRequest) => {
    req.principal = await services.auth.authenticate(req.headers.authorization, scope);
  };
}

/** The principal set by requireKey (routes behind it can rely on it). */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error('route is missing requireKey');
  return req.principal;
}
