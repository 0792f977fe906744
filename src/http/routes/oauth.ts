import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { SessionInfo } from '../../members/index.js';
import { OAUTH_SCOPES, OAuthError, redirectWith } from '../../oauth/index.js';
import type { Services } from '../../services.js';
import { limitPublic } from '../limits.js';
import { sessionToken } from '../session.js';
import { consentPage, errorPage, signInPage } from './oauth-pages.js';

const HTML = 'text/html; charset=utf-8';
/** OAuth request bodies are a few hundred bytes. */
const BODY_LIMIT = 64 * 1024;
const digest = (s: string) => createHash('sha256').update(s).digest();

/** Where the metadata of an MCP endpoint (`/mcp` or `/mcp/agent`) is (RFC 9728 §3.1: the well-known path with the resource's path appended). */
export const resourceMetadataUrl = (services: Services, path = '/mcp') => `${services.config.PRICING_BASE_URL}/.well-known/oauth-protected-resource${path}`;

/**
 * GenGate as the OAuth 2.1 authorization server of its MCP endpoint (decision 2202): the RFC 9728
 * and RFC 8414 metadata, dynamic registration, the consent page (a member's session cookie, a
 * CSRF token in the form), the token and revocation endpoints. Refusals are OAuth's JSON.
 */
export function registerOAuthRoutes(app: FastifyInstance, services: Services) {
  const { config, oauth } = services;
  const issuer = config.PUBLIC_BASE_URL;
  const open = { config: { cors: 'public' as const } };
  const metadataOf = (resource: string) => ({
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'GenGate MCP',
    resource_documentation: `${issuer}/docs`,
  });
  const resourceMetadata = metadataOf(oauth.settings.resource);
  const agentMetadata = metadataOf(`${oauth.settings.resource}/agent`);
  const serverMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
  app.get('/.well-known/oauth-protected-resource', open, async () => resourceMetadata);
  app.get('/.well-known/oauth-protected-resource/mcp', open, async () => resourceMetadata);
  app.get('/.well-known/oauth-protected-resource/mcp/agent', open, async () => agentMetadata);
  app.get('/.well-known/oauth-authorization-server', open, async () => serverMetadata);

  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    scope.setErrorHandler((err: FastifyError | Error, req, reply) => oauthFailure(err, req, reply));
    const limited = { ...open, bodyLimit: BODY_LIMIT, onRequest: limitPublic(services) };

    scope.post('/oauth/register', limited, async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await oauth.register(req.body)),
    );

    scope.post('/oauth/token', limited, async (req, reply) => {
      const tokens = await oauth.token(form(req.body));
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    });

    scope.post('/oauth/revoke', limited, async (req, reply) => {
      await oauth.revoke(form(req.body));
      return reply.header('cache-control', 'no-store').send({});
    });

    const page = { onRequest: limitPublic(services), bodyLimit: BODY_LIMIT };
    scope.get('/oauth/authorize', page, async (req, reply) => {
      noFrames(reply);
      const q = form(req.query);
      const request = await oauth.checkAuthorize(q);
      const session = await memberSession(services, req);
      if (typeof session === 'string') {
        const back = `/oauth/authorize?${new URLSearchParams(q as Record<string, string>).toString()}`;
        return reply.type(HTML).send(signInPage(back, session));
      }
      return reply.type(HTML).send(consentPage(request, { email: session.member!.email, accountName: session.accountName }, session.csrf));
    });

    scope.post('/oauth/authorize', page, async (req, reply) => {
      noFrames(reply);
      const body = form(req.body);
      const session = await memberSession(services, req);
      if (typeof session === 'string') return reply.code(403).type(HTML).send(errorPage('Not signed in', session));
      const csrf = typeof body.csrf === 'string' ? body.csrf : '';
      if (!timingSafeEqual(digest(csrf), digest(session.csrf))) {
        return reply
          .code(403)
          .type(HTML)
          .send(errorPage('Refused', 'the form is stale or was not sent by this page (wrong CSRF token); open the authorization link again'));
      }
      const request = await oauth.checkAuthorize(body);
      const who = { accountId: session.accountId, memberId: session.member!.id, role: session.member!.role };
      const to = body.decision === 'allow' ? await oauth.approve(request, who) : oauth.deny(request);
      return reply.code(302).header('location', to).header('cache-control', 'no-store').send();
    });
  });
}

/** The session of the cookie if it is a member's, else why not (shown on the page). */
async function memberSession(services: Services, req: FastifyRequest): Promise<SessionInfo | string> {
  const token = sessionToken(req);
  if (!token) return 'Sign in to GenGate to answer this request.';
  let session: SessionInfo;
  try {
    session = await services.members.sessions.get(token);
  } catch (e) {
    if (e instanceof AppError) return 'Your session has ended: sign in again to answer this request.';
    throw e;
  }
  if (!session.member) return 'This session was opened with an API key: sign in with your email and password to answer this request.';
  return session;
}

/** A form or query as a plain object of its string fields (a JSON body is taken as it is). */
function form(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function noFrames(reply: FastifyReply): void {
  reply.header('x-frame-options', 'DENY').header('content-security-policy', "frame-ancestors 'none'").header('cache-control', 'no-store');
}

/** OAuth's refusal shapes: an authorization request fault back to the client, or shown on a page; elsewhere `{error, error_description}`. */
function oauthFailure(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) {
  const page = req.url.startsWith('/oauth/authorize');
  if (err instanceof OAuthError) {
    if (page && err.redirect && err.to) {
      const to = redirectWith(err.to.redirectUri, { error: err.error, error_description: err.description, state: err.to.state });
      return reply.code(302).header('location', to).send();
    }
    if (page) return reply.code(err.status).type(HTML).send(errorPage('This request cannot be answered', err.description));
    return reply.code(err.status).header('cache-control', 'no-store').send(err.body());
  }
  const status = (err as FastifyError).statusCode;
  if (err instanceof AppError || (status && status >= 400 && status < 500)) {
    const body = { error: 'invalid_request', error_description: err.message };
    return page ? reply.code(400).type(HTML).send(errorPage('Bad request', err.message)) : reply.code(400).send(body);
  }
  req.log.error({ err }, 'oauth endpoint failed');
  const body = { error: 'server_error', error_description: `internal error; quote request id ${req.id} when reporting it` };
  return page ? reply.code(500).type(HTML).send(errorPage('Error', body.error_description)) : reply.code(500).send(body);
}
