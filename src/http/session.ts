import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireScope, scopesOfRole, type Principal, type Scope } from '../accounts/index.js';
import { CSRF_HEADER, SESSION_COOKIE } from '../api/index.js';
import type { ClientMeta, SessionInfo } from '../members/index.js';
import type { Services } from '../services.js';
import { Errors } from '../errors.js';

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const digest = (s: string) => createHash('sha256').update(s).digest();

/** The value of the session cookie, if the request carries one. */
export function sessionToken(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** The session of the request's cookie (401 when none or not live); a change (POST...) must carry the session's CSRF token (403). */
export async function requireSession(services: Services, req: FastifyRequest): Promise<SessionInfo> {
  const token = sessionToken(req);
  if (!token) throw Errors.unauthenticated('not signed in: sign in with POST /api/v1/auth/signin (the session cookie gg_session is missing)');
  const session = await services.members.sessions.get(token);
  checkCsrf(req, session);
  return session;
}

/** Refuses a change made with the session cookie without the session's CSRF token. */
export function checkCsrf(req: FastifyRequest, session: SessionInfo): void {
  if (!CHANGES.has(req.method)) return;
  const given = req.headers[CSRF_HEADER];
  if (typeof given !== 'string' || given === '') {
    throw Errors.forbidden(
      `missing ${CSRF_HEADER} header: a change made with the session cookie must send the csrfToken of the session (GET /api/v1/auth/session)`,
    );
  }
  if (!timingSafeEqual(digest(given), digest(session.csrf))) {
    throw Errors.forbidden(`wrong ${CSRF_HEADER} header: send the csrfToken of this session (GET /api/v1/auth/session)`);
  }
}

/**
 * The Principal of a session for a keyed operation: the session's account, its scopes (a
 * member's: their role's; a key-opened session's own) and its key's model list. The rate limits count
 * per member (all their sessions together) or per the key that opened the session.
 */
export function sessionPrincipal(session: SessionInfo, scope: Scope): Principal {
  // A member's session holds what the member's role holds (decision 2312), read from the database with the session on every request.
  const scopes = session.scopes ?? (session.member ? scopesOfRole(session.member.role) : null);
  requireScope(
    scopes,
    scope,
    session.member ? `this session (a ${session.member.role} of the account)` : 'this session (opened with an API key; without a scopes list it is read-only)',
  );
  return {
    accountId: session.accountId,
    keyId: session.keyId ?? session.member!.id,
    scopes,
    models: session.models,
    limits: session.limits,
    dialect: session.dialect,
    budget: session.budget,
    member: session.member && { id: session.member.id, role: session.member.role },
  };
}

/** Where the request comes from, for the member's list of sessions and the sign-in limit per address. */
export function clientMeta(req: FastifyRequest): ClientMeta {
  const ua = req.headers['user-agent'];
  return { address: req.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, Path=/, Secure when the request is https or PUBLIC_BASE_URL is. */
export function setSessionCookie(services: Services, req: FastifyRequest, reply: FastifyReply, token: string, expiresAt: number): void {
  const maxAge = Math.max(0, Math.round((expiresAt - services.clock.now()) / 1000));
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure(services, req) ? '; Secure' : ''}`);
}

export function clearSessionCookie(services: Services, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure(services, req) ? '; Secure' : ''}`);
}

function secure(services: Services, req: FastifyRequest): boolean {
  return req.protocol === 'https' || services.config.PUBLIC_BASE_URL.startsWith('https://');
}
