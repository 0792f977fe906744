import { z } from 'zod';
import { actorOf } from '../accounts/index.js';
import { parseWith, type ErrorKind } from '../errors.js';
import { keyBodies, readKeyChanges, readNewKey } from './key-bodies.js';
import type { KeyedCall, KeyedOperation, Reply } from './operation.js';
import * as S from './schemas.js';

/**
 * The account's own keys and the account itself, for its members and its keys (decision 1907):
 * the same `Accounts` calls as the admin API, with the caller as the actor, so a member manages
 * the keys they made (an owner every key) and a key makes no key more powerful than itself.
 * With the session cookie a change needs the x-csrf-token (the keyed mount checks it).
 */

const env = (schema: z.ZodType, description: string): Reply => ({ schema, envelope: true, description });
const keyParam = { id: 'The key id (key_...)' };
const keyId = (call: KeyedCall) => parseWith(z.object({ id: z.string().min(1).max(100) }), call.params, '').id;
const CHANGE_ERRORS: ErrorKind[] = ['invalid_request', 'missing_field', 'not_found'];
const WHO =
  'Members of the account with their session (an owner: every key; a member: the keys they made), or an API key with the scope (the keys it made; a key with a budget changes none).';

/** GET /api/v1/keys: the account's keys with their spend; never a secret. */
export const listKeys: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/keys',
    id: 'listKeys',
    tag: 'Account',
    auth: 'key',
    scope: 'keys:read',
    summary: "The account's API keys with their spend (never the secret)",
    description: 'Every key of the account, revoked ones included, with what each spent in its budget period and what is left.',
    ok: env(z.array(S.ApiKey), 'Keys, oldest first'),
  },
  handler:
    (services) =>
    async ({ principal }) => ({ data: await services.accounts.listKeys(principal.accountId) }),
};

/** POST /api/v1/keys: a new key of the caller's account; its secret is in this answer only. */
export const createKey: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/keys',
    id: 'createKey',
    tag: 'Account',
    auth: 'key',
    scope: 'keys:write',
    summary: 'Create an API key of the account (the secret is shown only in this answer)',
    description: `${WHO} A key made by a key gets at most the scopes, models and expiry of the key that makes it (missing ones are copied from it) and is revoked with it.`,
    body: keyBodies.create,
    ok: env(S.KeyCreated, 'The key and its secret (shown only here)'),
    errors: ['invalid_request', 'missing_field'],
  },
  handler: (services) => async (call) => ({
    data: await services.accounts.createKey(call.principal.accountId, readNewKey(call.body), actorOf(call.principal)),
  }),
};

/** POST /api/v1/keys/:id: changes a key's name, expiry or budget. */
export const updateKey: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/keys/:id',
    id: 'updateKey',
    tag: 'Account',
    auth: 'key',
    scope: 'keys:write',
    summary: "Change a key's name, expiry or budget",
    description: `${WHO} null removes an expiry or a budget. Another account's key is 404.`,
    params: keyParam,
    body: keyBodies.update,
    ok: env(S.ApiKey, 'The key with its spend in the current period'),
    errors: CHANGE_ERRORS,
  },
  handler: (services) => async (call) => ({
    data: await services.accounts.updateKey(keyId(call), readKeyChanges(call.body), actorOf(call.principal)),
  }),
};

/** POST /api/v1/keys/:id/revoke: the key (and the keys it made) answer 401 from the next request on. */
export const revokeKey: KeyedOperation = {
  spec: {
    method: 'post',
    path: '/api/v1/keys/:id/revoke',
    id: 'revokeKey',
    tag: 'Account',
    auth: 'key',
    scope: 'keys:write',
    summary: 'Revoke a key, and the keys it made (401 from the next request on)',
    description: `${WHO} Revoking twice keeps the first time. Another account's key is 404.`,
    params: keyParam,
    ok: env(S.ApiKey, 'The key'),
    errors: ['not_found'],
  },
  handler: (services) => async (call) => ({ data: await services.accounts.revokeKey(keyId(call), actorOf(call.principal)) }),
};

/** `data` of GET /api/v1/account. */
export const AccountAnswer = S.Account.omit({ webhookSecret: true }).extend({
  limits: S.Account.shape.limits.unwrap(),
  role: z.enum(['owner', 'member', 'operator']).nullable().describe("The caller's role in the account; null for an API key (or a session it opened)"),
  keyId: z.string().nullable().describe('The API key making the call (or that opened the session); null for a member'),
});

/** GET /api/v1/account: the caller's account as the operator sees it (without the webhook secret), and the caller's role. */
export const getAccount: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/account',
    id: 'getAccount',
    tag: 'Account',
    auth: 'key',
    scope: 'balance:read',
    summary: "The caller's account: name, status, balance, dialect, rate limits, creation time, and the caller's role",
    description: 'GET /api/v1/auth/session says who is signed in (member, csrfToken); this says what the account is, to a key as well as to a session.',
    ok: env(AccountAnswer, 'The account'),
  },
  handler:
    (services) =>
    async ({ principal }) => {
      const account = await services.accounts.view(principal.accountId);
      return { data: { ...account, role: principal.member?.role ?? null, keyId: principal.member ? null : principal.keyId } };
    },
};
