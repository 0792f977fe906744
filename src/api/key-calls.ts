import type { Principal, Scope } from '../accounts/index.js';
import type { LimitGroup, LimitState } from '../limits/index.js';
import type { Services } from '../services.js';
import { Errors, type AppError } from '../errors.js';

/** DECISIONS §13: createTask and upload share one budget per key, recordInfo, list and balance another. */
const GROUP_OF_SCOPE: Record<Scope, 'write' | 'read'> = {
  'tasks:write': 'write',
  'files:write': 'write',
  'tasks:read': 'read',
  'balance:read': 'read',
  billing: 'write',
  'keys:read': 'read',
  'keys:write': 'write',
};

const WHAT: Record<LimitGroup, string> = {
  write: 'createTask and upload requests per API key',
  read: 'recordInfo, list and balance requests per API key',
  public: 'requests to public endpoints per client address',
  signin: 'sign-in attempts',
};

/** The 429 naming the limit and the wait. */
export function limitRefusal(services: Services, group: LimitGroup, state: LimitState): AppError {
  const window = services.config.RATE_LIMIT_WINDOW_SECONDS;
  return Errors.rateLimited(
    `rate limit exceeded: at most ${state.limit} ${WHAT[group]} every ${window} s; retry in ${state.resetSeconds} s`,
    state.resetSeconds,
  );
}

/** Counts one keyed call against its key's budget for the scope's group (the account may override the limit); the caller decides what a refusal looks like. */
export async function hitKeyCall(services: Services, principal: Principal, scope: Scope): Promise<{ group: LimitGroup; state: LimitState }> {
  const group = GROUP_OF_SCOPE[scope];
  const { config } = services;
  const limit = principal.limits[group] ?? (group === 'write' ? config.RATE_LIMIT_WRITE : config.RATE_LIMIT_READ);
  return { group, state: await services.limits.hit(group, principal.keyId, limit) };
}

/**
 * Counts a keyed call (REST or MCP) against its key's budget for the scope's group; throws the
 * 429 when over.
 */
export async function countKeyCall(services: Services, principal: Principal, scope: Scope): Promise<LimitState> {
  const { group, state } = await hitKeyCall(services, principal, scope);
  if (!state.allowed) throw limitRefusal(services, group, state);
  return state;
}
