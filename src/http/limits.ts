import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, Scope } from '../accounts/index.js';
import { addressSubject, type LimitGroup, type LimitState } from '../limits/index.js';
import type { Services } from '../services.js';
import { AppError } from '../errors.js';
import { hitKeyCall, limitRefusal } from '../api/index.js';

function setHeaders(reply: FastifyReply, state: LimitState): void {
  reply.header('ratelimit-limit', state.limit);
  reply.header('ratelimit-remaining', state.remaining);
  reply.header('ratelimit-reset', state.resetSeconds);
}

/** Sets the RateLimit-* headers; on a refusal throws the 429. */
function enforce(services: Services, reply: FastifyReply, group: LimitGroup, state: LimitState): void {
  setHeaders(reply, state);
  if (!state.allowed) throw limitRefusal(services, group, state);
}

/** Counts a keyed HTTP call (api/ key-call accounting), with the RateLimit-* headers on the answer (a 429 included). */
export async function limitKey(services: Services, reply: FastifyReply, principal: Principal, scope: Scope): Promise<void> {
  const { group, state } = await hitKeyCall(services, principal, scope);
  enforce(services, reply, group, state);
}

/**
 * An onRequest hook limiting public routes per client address (RATE_LIMIT_PUBLIC; TRUSTED_PROXIES
 * or TRUST_PROXY decide what the address is, an IPv6 address counting by its /64). The pricing host has no envelope: there the 429 body has the
 * calculator's error shape.
 */
export function limitPublic(services: Services, shape: 'envelope' | 'pricing' = 'envelope') {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    // Any web page may read public answers (a 429 included), with or without an Origin header: a
    // shared cache may hand a copy fetched without one to a page.
    reply.header('access-control-allow-origin', '*');
    const state = await services.limits.hit('public', addressSubject(req.ip), services.config.RATE_LIMIT_PUBLIC);
    try {
      enforce(services, reply, 'public', state);
    } catch (e) {
      if (shape === 'envelope' || !(e instanceof AppError)) throw e;
      reply.header('retry-after', e.headers['retry-after']!).header('cache-control', 'no-store');
      return reply.code(429).send({ ok: false, error: { code: 'rate_limited', message: e.message, field: null } });
    }
  };
}
