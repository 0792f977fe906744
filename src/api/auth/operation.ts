import { z } from 'zod';
import type { ClientMeta, SessionInfo } from '../../members/index.js';
import type { Services } from '../../services.js';
import type { ErrorKind } from '../../errors.js';
import type { Operation, Reply } from '../operation.js';

/**
 * Who may call an /api/v1/auth operation: anyone (`none`: sign-in, sign-up, reset), any session
 * (`any`, one opened with an API key too), a member's session (`member`), or the session of an
 * owner or operator of the account (`owner`). The face reads the session and checks the CSRF
 * token of a change before the handler runs.
 */
export type SessionNeed = 'none' | 'any' | 'member' | 'owner';

/** What an auth call brings. */
export interface AuthCall {
  /** The session of the cookie (null for `none` operations). */
  session: SessionInfo | null;
  params: unknown;
  body: unknown;
  meta: ClientMeta;
}

/** An auth answer: `data` in the envelope (its code is `status`, 200 unless given), and the session cookie to set or clear. */
export interface AuthAnswer {
  data: unknown;
  status?: number;
  /** A new session: the face sets its cookie. */
  signedIn?: { token: string; expiresAt: number };
  /** The face clears the cookie. */
  signedOut?: boolean;
}

export interface AuthOperation {
  spec: Operation & { auth?: 'session' };
  needs: SessionNeed;
  handle(services: Services, call: AuthCall): Promise<AuthAnswer>;
}

/** The name of the session cookie. */
export const SESSION_COOKIE = 'gg_session';
/** The header a change made with the session cookie must carry. */
export const CSRF_HEADER = 'x-csrf-token';

const env = (schema: z.ZodType, description: string, status?: number): Reply => ({ schema, envelope: true, description, ...(status ? { status } : {}) });

/** Builds an operation of the Auth tag; operations with a session get `auth: 'session'` and its errors. */
export function authOp(
  needs: SessionNeed,
  spec: Omit<Operation, 'tag' | 'auth' | 'ok'> & { ok: [z.ZodType, string, number?] },
  handle: AuthOperation['handle'],
): AuthOperation {
  const errors: ErrorKind[] = [...(spec.errors ?? [])];
  if (needs !== 'none') errors.push('unauthenticated', 'forbidden');
  const { ok, ...rest } = spec;
  return {
    spec: { ...rest, tag: 'Auth', ...(needs === 'none' ? {} : { auth: 'session' as const }), ok: env(ok[0], ok[1], ok[2]), errors: [...new Set(errors)] },
    needs,
    handle,
  };
}

const role = z.enum(['owner', 'member', 'operator']);

/** `data` of a session answer. */
export const SessionAnswer = z.object({
  sessionId: z.string(),
  account: z.object({ id: z.string(), name: z.string() }),
  member: z.object({ id: z.string(), email: z.string(), role }).nullable().describe('null for a session opened with an API key'),
  role: role.nullable(),
  scopes: z.array(z.string()).nullable().describe('null: every scope'),
  readOnly: z.boolean(),
  csrfToken: z.string().describe(`send it as the ${CSRF_HEADER} header with every change (POST) made with the session cookie`),
  expiresAt: z.string(),
});

export function sessionAnswer(s: SessionInfo): z.infer<typeof SessionAnswer> {
  return {
    sessionId: s.id,
    account: { id: s.accountId, name: s.accountName },
    member: s.member,
    role: s.member?.role ?? null,
    scopes: s.scopes,
    readOnly: s.scopes !== null && !s.scopes.some((x) => x.endsWith(':write')),
    csrfToken: s.csrf,
    expiresAt: new Date(s.expiresAt).toISOString(),
  };
}

export const Member = z.object({ id: z.string(), accountId: z.string(), email: z.string(), role, createdAt: z.string() });
export const SessionRow = z.object({
  id: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
  address: z.string().nullable(),
  userAgent: z.string().nullable(),
  current: z.boolean(),
});
/** A pending invite as the account's members see it (never its token). */
export const PendingInvite = z.object({
  id: z.string(),
  accountId: z.string(),
  email: z.string(),
  role: z.enum(['owner', 'member']),
  createdAt: z.string(),
  expiresAt: z.string(),
});
export const Invite = z.object({
  invite: PendingInvite,
  url: z.string().describe('the invite link (also emailed when SMTP is set); its token is in the fragment'),
  emailed: z.boolean(),
});
