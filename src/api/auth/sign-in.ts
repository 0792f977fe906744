import { z } from 'zod';
import { Errors, parseWith } from '../../errors.js';
import { emailOf } from '../../members/index.js';
import { addressSubject } from '../../limits/index.js';
import type { Services } from '../../services.js';
import { authOp, SessionAnswer, sessionAnswer, type AuthAnswer } from './operation.js';
import type { SignedIn } from '../../members/index.js';

export const signInBodies = {
  signIn: z.object({ email: z.string().max(300), password: z.string().max(1000) }).strict(),
  signInKey: z.object({ apiKey: z.string().max(300) }).strict(),
  signUp: z
    .object({
      email: z.string().max(300).optional(),
      password: z.string().max(1000),
      accountName: z.string().max(200).optional(),
      inviteToken: z.string().max(200).optional().describe('the token of an invite link (required when SIGNUP=invite)'),
    })
    .strict(),
};

/**
 * Counts a sign-in attempt per client address (an IPv6 address by its /64) and, when given, per
 * email from that address (SIGNIN_LIMIT_PER_ADDRESS, SIGNIN_LIMIT_PER_EMAIL per
 * SIGNIN_WINDOW_SECONDS); throws the 429 when either is over. The email counts together with the
 * address, so guesses from one place lock out that place only, never the member signing in from
 * their own (decision 2311).
 */
export async function limitSignIn(services: Services, address: string | null, email: string | null): Promise<void> {
  const { config, limits } = services;
  const window = config.SIGNIN_WINDOW_SECONDS;
  const from = addressSubject(address);
  const checks: Array<[string, number, string]> = [[`addr:${from}`, config.SIGNIN_LIMIT_PER_ADDRESS, 'from this address']];
  if (email) checks.push([`email:${email}|addr:${from}`, config.SIGNIN_LIMIT_PER_EMAIL, 'for this email from this address']);
  for (const [subject, limit, what] of checks) {
    const state = await limits.hit('signin', subject, limit, window);
    if (!state.allowed) {
      throw Errors.rateLimited(`too many sign-in attempts ${what}: at most ${limit} every ${window} s; retry in ${state.resetSeconds} s`, state.resetSeconds);
    }
  }
}

const DAY_SECONDS = 86_400;

/**
 * Counts an invite per account and per client address (INVITE_LIMIT_PER_ACCOUNT,
 * INVITE_LIMIT_PER_ADDRESS per 24 hours), so invites are no mail relay (decision 2314); 429 past either.
 */
export async function limitInvites(services: Services, accountId: string, address: string | null): Promise<void> {
  const { config, limits } = services;
  const checks: Array<[string, number, string]> = [
    [`invite-account:${accountId}`, config.INVITE_LIMIT_PER_ACCOUNT, 'for this account'],
    [`invite-addr:${addressSubject(address)}`, config.INVITE_LIMIT_PER_ADDRESS, 'from this address'],
  ];
  for (const [subject, limit, what] of checks) {
    const state = await limits.hit('signin', subject, limit, DAY_SECONDS);
    if (!state.allowed) {
      throw Errors.rateLimited(`too many invites ${what}: at most ${limit} every 24 hours; retry in ${state.resetSeconds} s`, state.resetSeconds);
    }
  }
}

const signedIn = (r: SignedIn, extra: object = {}): AuthAnswer => ({
  data: { ...sessionAnswer(r.session), ...extra },
  signedIn: { token: r.token, expiresAt: r.session.expiresAt },
});

export const signIn = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/signin',
    id: 'signIn',
    summary: 'Sign in with email and password',
    description:
      'Sets the session cookie gg_session (HttpOnly, SameSite=Lax, Secure on https) and answers the session with its csrfToken. Rate limited per client address and per email (429).',
    body: signInBodies.signIn,
    ok: [SessionAnswer, 'The new session'],
    errors: ['invalid_request', 'missing_field', 'unauthenticated', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(signInBodies.signIn, call.body, '');
    await limitSignIn(s, call.meta.address, emailOf(body.email));
    return signedIn(await s.members.signIn(body.email, body.password, call.meta));
  },
);

export const signInKey = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/signin/key',
    id: 'signInWithKey',
    summary: 'Open a session with an API key (read-only unless the key has a scopes list)',
    description:
      'A key without a scopes list opens a read-only session (tasks:read, balance:read); a key with a scopes list opens a session with exactly those scopes. The session ends when the key is revoked. Rate limited per client address.',
    body: signInBodies.signInKey,
    ok: [SessionAnswer, 'The new session'],
    errors: ['invalid_request', 'missing_field', 'unauthenticated', 'forbidden', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(signInBodies.signInKey, call.body, '');
    await limitSignIn(s, call.meta.address, null);
    return signedIn(await s.members.signInWithKey(body.apiKey, call.meta));
  },
);

export const signUp = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/signup',
    id: 'signUp',
    summary: 'Sign up: a new account and its owner (SIGNUP=open), or join with an invite',
    description:
      'SIGNUP=off: 403. SIGNUP=invite: only with inviteToken. SIGNUP=open: without inviteToken a new account with a zero balance is made, its owner signed in, and its first API key shown once (apiKey). With inviteToken the invite is accepted (any SIGNUP but off).',
    body: signInBodies.signUp,
    ok: [SessionAnswer.extend({ apiKey: z.string().optional().describe("the new account's first API key, shown once") }), 'The new session'],
    errors: ['invalid_request', 'missing_field', 'forbidden', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(signInBodies.signUp, call.body, '');
    await limitSignIn(s, call.meta.address, null);
    const r = await s.members.signUp(body, call.meta);
    return signedIn(r, r.apiKey ? { apiKey: r.apiKey } : {});
  },
);

export const signOut = authOp(
  'any',
  {
    method: 'post',
    path: '/api/v1/auth/signout',
    id: 'signOut',
    summary: 'Sign out: revoke this session and clear its cookie',
    ok: [z.null(), 'Signed out'],
  },
  async (s, call) => {
    await s.members.sessions.revoke(call.session!.id);
    return { data: null, signedOut: true };
  },
);
