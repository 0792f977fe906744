import { z } from 'zod';
import type { Operation, Reply } from './operation.js';

/**
 * The OAuth endpoints of GenGate as the authorization server of its MCP endpoint (decision 2202):
 * their specs for the OpenAPI document (http/routes/oauth.ts serves them). Answers and refusals
 * are OAuth's own JSON (`{error, error_description}`, RFC 6749 §5.2), not GenGate's envelope.
 */

const OAuthRefusal: Reply = { schema: z.object({ error: z.string(), error_description: z.string() }), description: "A refusal in OAuth's shape" };
const scope = z.string().optional().describe('Space-separated scopes out of tasks:read tasks:write files:write balance:read (all four when left out)');

const authorizeQuery = z.object({
  response_type: z.literal('code'),
  client_id: z.string(),
  redirect_uri: z.string().optional().describe('One of the redirect URIs the client registered (required when it registered several)'),
  code_challenge: z.string().describe('base64url SHA-256 of the PKCE code_verifier'),
  code_challenge_method: z.literal('S256'),
  scope,
  state: z.string().optional(),
  resource: z.string().optional().describe('RFC 8707: the MCP endpoint, {PRICING_BASE_URL}/mcp'),
});

const tokenBody = z.object({
  grant_type: z.enum(['authorization_code', 'refresh_token']),
  client_id: z.string(),
  code: z.string().optional().describe('authorization_code: the code of the redirect'),
  redirect_uri: z.string().optional().describe('authorization_code: the redirect_uri of the authorization request'),
  code_verifier: z.string().optional().describe('authorization_code: the PKCE verifier'),
  refresh_token: z.string().optional().describe('refresh_token: the refresh token (used once; the answer carries the next one)'),
  scope: scope.describe("refresh_token: may name only granted scopes (the new tokens carry the grant's scopes)"),
  resource: z.string().optional(),
});

const Tokens = z.object({
  access_token: z.string().describe('gga_...: use as Authorization: Bearer on /mcp (and the REST API)'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string().describe('ggr_...: used once'),
  scope: z.string(),
});

const json = (description: string): Reply => ({ schema: 'any', description });

export const OAUTH_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource',
    id: 'protectedResourceMetadata',
    tag: 'OAuth',
    host: 'pricing',
    summary: 'RFC 9728 metadata of the MCP endpoint: its authorization server and scopes',
    ok: json('{resource, authorization_servers, scopes_supported, bearer_methods_supported, resource_name}'),
  },
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource/mcp',
    id: 'protectedResourceMetadataMcp',
    tag: 'OAuth',
    host: 'pricing',
    summary: 'The same metadata at the address RFC 9728 derives from /mcp',
    ok: json('As /.well-known/oauth-protected-resource'),
  },
  {
    method: 'get',
    path: '/.well-known/oauth-protected-resource/mcp/agent',
    id: 'protectedResourceMetadataMcpAgent',
    tag: 'OAuth',
    host: 'pricing',
    summary: 'The metadata of /mcp/agent (its resource is {PRICING_BASE_URL}/mcp/agent), where its 401 points',
    ok: json('As /.well-known/oauth-protected-resource, with resource ending in /mcp/agent'),
  },
  {
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    id: 'authorizationServerMetadata',
    tag: 'OAuth',
    summary: 'RFC 8414 metadata: endpoints, PKCE S256, dynamic registration, scopes',
    ok: json('Authorization server metadata'),
  },
  {
    method: 'post',
    path: '/oauth/register',
    id: 'oauthRegister',
    tag: 'OAuth',
    summary: 'RFC 7591 dynamic client registration (public clients: no secret)',
    description:
      'redirect_uris: 1 to 10, each https, http on localhost / 127.0.0.1 / [::1], or an app scheme. The answer has client_id and token_endpoint_auth_method none.',
    body: z.object({
      redirect_uris: z.array(z.string()),
      client_name: z.string().optional(),
      grant_types: z.array(z.string()).optional(),
      response_types: z.array(z.string()).optional(),
      token_endpoint_auth_method: z.string().optional(),
      scope,
    }),
    ok: { status: 201, schema: 'any', description: 'The registered client (client_id, redirect_uris, ...)' },
    extra: { '400': OAuthRefusal },
  },
  {
    method: 'get',
    path: '/oauth/authorize',
    id: 'oauthAuthorize',
    tag: 'OAuth',
    summary: "The consent page: a signed-in member (session cookie) allows or denies the client's request",
    description:
      'Authorization code with PKCE (S256 only). Without a member session the page links to the sign-in. A fault in client_id or redirect_uri is shown on the page; any other fault goes back to redirect_uri as error.',
    query: authorizeQuery,
    ok: { type: 'text/html', description: 'The consent page (or the sign-in link)' },
    extra: {
      '302': { description: 'Back to redirect_uri with error (a faulty request)' },
      '400': { type: 'text/html', description: 'Unknown client or redirect_uri' },
    },
  },
  {
    method: 'post',
    path: '/oauth/authorize',
    id: 'oauthConsent',
    tag: 'OAuth',
    summary: "The consent form's answer: Allow or Deny (session cookie and the form's CSRF token)",
    bodyType: 'application/x-www-form-urlencoded',
    body: authorizeQuery.extend({ csrf: z.string(), decision: z.enum(['allow', 'deny']) }),
    ok: { status: 302, description: 'To redirect_uri with code and state (allow) or error=access_denied (deny)' },
    extra: {
      '400': { type: 'text/html', description: 'A faulty request' },
      '403': { type: 'text/html', description: 'Not signed in as a member, or a wrong CSRF token' },
    },
  },
  {
    method: 'post',
    path: '/oauth/token',
    id: 'oauthToken',
    tag: 'OAuth',
    summary: 'Tokens: authorization_code (with code_verifier) or refresh_token (rotated)',
    bodyType: 'application/x-www-form-urlencoded',
    body: tokenBody,
    ok: { schema: Tokens, description: 'An access token (OAUTH_ACCESS_TOKEN_SECONDS) and the next refresh token' },
    extra: { '400': OAuthRefusal },
  },
  {
    method: 'post',
    path: '/oauth/revoke',
    id: 'oauthRevoke',
    tag: 'OAuth',
    summary: 'RFC 7009: revoke an access token, or a refresh token with its whole grant (every token of it and its key)',
    bodyType: 'application/x-www-form-urlencoded',
    body: z.object({ token: z.string(), token_type_hint: z.string().optional(), client_id: z.string().optional() }),
    ok: { description: 'Revoked (also for an unknown token)' },
    extra: { '400': OAuthRefusal },
  },
];
