import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, Scope } from '../accounts/index.js';
import type { LimitGroup, LimitState } from '../limits/index.js';
import type { Services } from '../services.js';
import { AppError, Errors } from '../errors.js';

/** DECISIONS §13: createTask and upload share one budget per key, recordInfo, list and balance another. */
const GROUP_OF_SCOPE: Record<Scope, 'write' | 'read'> = {
  'tasks:write': 'write',
  'files:write': 'write',
  'tasks:read': 'read',
  'balance:read': 'read',
};

const WHAT: Record<LimitGroup, string> = {
  write: 'createTask and upload requests per API key',
  read: 'recordInfo, list and balance requests per API key',
  public: 'requests to public endpoints per client address',
};

function setHeaders(reply: FastifyReply, state: LimitState): void {
  reply.header('ratelimit-limit', state.limit);
  reply.header('ratelimit-remaining', state.remaining);
  reply.header('ratelimit-reset', state.resetSeconds);
}

/** The 429 naming the limit and the wait. */
function refusal(services: Services, group: LimitGroup, state: LimitState): AppError {
  const window = services.config.RATE_LIMIT_WINDOW_SECONDS;
  return Errors.rateLimited(
    `rate limit exceeded: at most ${state.limit} ${WHAT[group]} every ${window} s; retry in ${state.resetSeconds} s`,
    state.resetSeconds,
  );
}

/** Sets the RateLimit-* headers; on a refusal throws the 429. */
function enforce(services: Services, reply: FastifyReply, group: LimitGroup, state: LimitState): void {
  setHeaders(reply, state);
  if (!state.allowed) throw refusal(services, group, state);
}

/**
 * Counts a keyed call (REST or MCP) against its key's budget for the scope's group (the account
 * may override the limit); throws the 429 when over.
 */
export async function countKeyCall(services: Services, principal: Principal, scope: Scope): Promise<LimitState> {
  const { group, state } = await hitKey(services, principal, scope);
  if (!state.allowed) throw refusal(services, group, state);
  return state;
}

/** The same count for an HTTP route, with the RateLimit-* headers on the answer (a 429 included). */
export async function limitKey(services: Services, reply: FastifyReply, principal: Principal, scope: Scope): Promise<void> {
  const { group, state } = await hitKey(services, principal, scope);
  enforce(services, reply, group, state);
}

async function hitKey(services: Services, principal: Principal, scope: Scope) {
  const group = GROUP_OF_SCOPE[scope];
  const { config } = services;
  const limit = principal.limits[group] ?? (group === 'write' ? config.RATE_LIMIT_WRITE : config.RATE_LIMIT_READ);
  return { group, state: await services.limits.hit(group, principal.keyId, limit) };
}

/**
 * An onRequest hook limiting public routes per client address (RATE_LIMIT_PUBLIC; TRUST_PROXY
 * decides what the address is). The pricing host has no envelope: there the 429 body has the
 * calculator's error shape.
 */
export function limitPublic(services: Services, shape: 'envelope' | 'pricing' = 'envelope') {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const state = await services.limits.hit('public', req.ip, services.config.RATE_LIMIT_PUBLIC);
    try {
      enforce(services, reply, 'public', state);
    } catch (e) {
      if (shape === 'envelope' || !(e instanceof AppError)) throw e;
      reply.header('retry-after', e.headers['retry-after']!).header('cache-control', 'no-store');
      return reply.code(429).send({ ok: false, error: { code: 'rate_limited', message: e.message, field: null } });
    }
  };
}
