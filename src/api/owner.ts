import type { Principal } from '../accounts/index.js';
import { Errors } from '../errors.js';
import type { Services } from '../services.js';

/**
 * Account settings that move money or trust (the webhook secret, the low-balance alert) change only
 * with a key that has the scope (checked before) or an owner's session: a member's session has every
 * scope, so a member who is not an owner is refused here (decision 1905).
 */
export async function requireOwner(services: Services, principal: Principal, what: string): Promise<void> {
  if (!principal.keyId.startsWith('mem_')) return;
  const member = await services.members.get(principal.keyId, principal.accountId);
  if (member.role === 'member') throw Errors.forbidden(`${what} needs an owner of the account (you are a member) or an API key with the scope billing`);
}
