import type { MemberRole } from '../store/index.js';
import { Errors } from '../errors.js';
import { SCOPES, type Scope } from './keys.js';

/**
 * What each role may do, as scopes (decision 2312). `billing` (card top-ups, the webhook secret,
 * the low-balance alert) belongs to owners and operators: a member who is not an owner holds every
 * other scope, and no key a member makes carries more than that.
 */
export const OWNER_SCOPES: readonly Scope[] = ['billing'];
const MEMBER_SCOPES: Scope[] = SCOPES.filter((s) => !OWNER_SCOPES.includes(s));

/** The scopes a role holds; null: every scope. */
export function scopesOfRole(role: MemberRole): Scope[] | null {
  return role === 'member' ? [...MEMBER_SCOPES] : null;
}

/**
 * The one check of a scope, for keys, OAuth tokens and sessions alike: `scopes` (null: every
 * scope) must include `scope`, else 403 naming what the caller has. `who` names the caller for
 * the message ("this API key", "a member who is not an owner").
 */
export function requireScope(scopes: readonly Scope[] | null, scope: Scope | null, who: string): void {
  if (scope === null || scopes === null || scopes.includes(scope)) return;
  const owner = OWNER_SCOPES.includes(scope) ? `; ${scope} is an owner's: ask an owner of the account` : '';
  throw Errors.forbidden(`${who} lacks the scope ${scope} (it has: ${scopes.join(', ') || 'none'})${owner}`);
}

/**
 * The scopes of a key a member makes: within what the member's role holds (403 naming the scope
 * and the role); left out, the role's own list (a member's key never gets "every scope").
 */
export function boundByRole(role: MemberRole, scopes: Scope[]): Scope[] {
  const allowed = scopesOfRole(role);
  if (allowed === null) return scopes;
  if (scopes.length === 0) return allowed;
  const extra = scopes.find((s) => !allowed.includes(s));
  if (extra !== undefined) {
    throw Errors.forbidden(
      `scopes: a ${role} who is not an owner cannot give the scope ${extra}; an owner of the account can (a ${role} may give: ${allowed.join(', ')})`,
    );
  }
  return scopes;
}

/** The scopes of a key after its maker lost a role's scopes: those the role still holds (an empty list, not "every scope", when none is left). */
export function capScopes(scopes: Scope[] | null, allowed: Scope[]): Scope[] {
  return (scopes ?? [...SCOPES]).filter((s) => allowed.includes(s));
}
