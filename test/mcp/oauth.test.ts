import { createHash, randomBytes } from 'node:crypto';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE_TTL_MS, endUnexchangedConsents } from '../../src/oauth/index.js';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { asBrowser, signedIn, type Browser } from '../members/support.js';
import { FAST, MovableClock } from '../tasks/support.js';

/**
 * OAuth for MCP end to end, without a browser: the SDK's client discovers GenGate from /mcp's 401,
 * registers, and the test answers the consent page with the member's cookie and the form's CSRF
 * token; then PKCE, refresh rotation, revocation and scopes by hand against the endpoints.
 */

const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:9/callback';

/** The SDK's client side of OAuth, kept in memory; the authorization URL is noted instead of opening a browser. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authUrl?: URL;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

for (const dialect of dialects()) {
  describe(`OAuth for MCP (${dialect})`, () => {
    let s: TestServer;
    let member: Browser;
    let accountId: string;
    const clock = new MovableClock();

    /** The consent page as the member's browser sees it, and its form answered with `decision` (the redirect's query). */
    async function consent(authUrl: string, decision: 'allow' | 'deny', opts: { csrf?: string } = {}) {
      const page = await fetch(authUrl, { headers: { cookie: member.cookie } });
      const html = await page.text();
      expect(page.status, html).toBe(200);
      const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescape(m[2]!)]));
      if (opts.csrf !== undefined) fields.csrf = opts.csrf;
      const answer = await fetch(`${s.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: member.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, decision }).toString(),
      });
      return { html, status: answer.status, location: answer.headers.get('location'), body: answer.status === 302 ? '' : await answer.text() };
    }
    const unescape = (v: string) => v.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

    const form = (path: string, body: Record<string, string>) =>
      fetch(`${s.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body).toString(),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any, headers: r.headers }));
    const register = async () =>
      (await s.call('POST', '/oauth/register', { body: { client_name: 'Script', redirect_uris: [REDIRECT] } })).body.client_id as string;

    /** A code by hand: authorize with PKCE S256 and `scope`, the member allows. */
    async function codeFor(clientId: string, scope: string, challenge: string) {
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope,
        state: 'st-1',
      });
      const r = await consent(`${s.url}/oauth/authorize?${q}`, 'allow');
      expect(r.status, r.body).toBe(302);
      const back = new URL(r.location!);
      expect(back.searchParams.get('state')).toBe('st-1');
      expect(back.searchParams.get('iss')).toBe(s.config.PUBLIC_BASE_URL);
      return back.searchParams.get('code')!;
    }
    /** A new client with a code the member allowed for `scope`, and the code's exchange with a verifier. */
    async function consented(scope: string) {
      const clientId = await register();
      const { verifier, challenge } = pkce();
      const code = await codeFor(clientId, scope, challenge);
      const exchange = (v: string) =>
        form('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: v });
      return { clientId, verifier, code, exchange };
    }
    async function tokensFor(scope: string) {
      const { clientId, verifier, exchange } = await consented(scope);
      const r = await exchange(verifier);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { clientId, ...r.body } as { clientId: string; access_token: string; refresh_token: string; scope: string };
    }
    /** The member's grant of the client, and the key it made, as the member's lists show them. */
    async function grantOf(clientId: string) {
      const grant = (await asBrowser(s, member)('GET', '/api/v1/auth/oauth-grants')).body.data.find((g: any) => g.clientId === clientId);
      const key = (await asBrowser(s, member)('GET', '/api/v1/keys')).body.data.find((k: any) => k.id === grant.keyId);
      return { grant, key };
    }
    /** tools/list on /mcp with a bearer token: the HTTP status and the tool names. */
    async function mcpTools(token: string) {
      const r = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      const body = (await r.json()) as any;
      return {
        status: r.status,
        names: r.status === 200 ? (body.result.tools as Array<{ name: string }>).map((t) => t.name).sort() : [],
        body,
        headers: r.headers,
      };
    }

    beforeAll(async () => {
      s = await startServerOnFreePort(dialect, { ...FAST, SIGNUP: 'open', AUTH_CACHE_MS: '60000' }, undefined, { clock });
      const up = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'ada@example.com', password: PASSWORD, accountName: 'acme' } });
      member = await signedIn(up);
      accountId = up.body.data.account.id;
      await s.services.accounts.topup(accountId, 5_000_000, 'test money');
    }, 60_000);
    afterAll(async () => s?.close());

    it('publishes RFC 9728 and RFC 8414 metadata', async () => {
      const prm = (await s.call('GET', '/.well-known/oauth-protected-resource/mcp')).body;
      expect(prm).toMatchObject({
        resource: `${s.url}/mcp`,
        authorization_servers: [s.url],
        scopes_supported: ['tasks:read', 'tasks:write', 'files:write', 'balance:read'],
      });
      expect((await s.call('GET', '/.well-known/oauth-protected-resource')).body).toEqual(prm);
      expect((await s.call('GET', '/.well-known/oauth-protected-resource/mcp/agent')).body).toEqual({ ...prm, resource: `${s.url}/mcp/agent` });
      expect((await s.call('GET', '/.well-known/oauth-authorization-server')).body).toMatchObject({
        issuer: s.url,
        authorization_endpoint: `${s.url}/oauth/authorize`,
        token_endpoint: `${s.url}/oauth/token`,
        registration_endpoint: `${s.url}/oauth/register`,
        revocation_endpoint: `${s.url}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    });

    it("the SDK's client: /mcp/agent's 401 → discovery → registration → consent → PKCE exchange → tools with the token, on /mcp/agent, /mcp and REST", async () => {
      const provider = new MemoryProvider();
      const first = new Client({ name: 'oauth-agent', version: '1.0.0' });
      await expect(first.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp/agent`), { authProvider: provider }))).rejects.toBeInstanceOf(
        UnauthorizedError,
      );
      expect(provider.info?.client_id).toMatch(/^cli_/);
      const authUrl = provider.authUrl!;
      expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authUrl.searchParams.get('resource')).toBe(`${s.url}/mcp/agent`);

      const answered = await consent(authUrl.toString(), 'allow');
      expect(answered.html).toContain('Test Agent');
      expect(answered.html).toContain(REDIRECT);
      expect(answered.html).toContain('tasks:write');
      expect(answered.status).toBe(302);
      const code = new URL(answered.location!).searchParams.get('code')!;
      const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp/agent`), { authProvider: provider });
      await transport.finishAuth(code);
      expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'tasks:read tasks:write files:write balance:read' });
      expect(provider.saved!.access_token).toMatch(/^gga_/);

      const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp/agent`), { authProvider: provider }));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['create_task', 'upload_file', 'get_balance', 'cancel_task']));
      const created = (await client.callTool({ name: 'create_task', arguments: { model: 'suno-v6', input: { prompt: 'oauth song' } } })) as any;
      expect(created.isError, created.content[0].text).toBeFalsy();
      // Charged to the member's account; the same token works on the REST API.
      const rest = await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${created.structuredContent.taskId}`, { key: provider.saved!.access_token });
      expect(rest.status).toBe(200);
      expect((await s.call('GET', '/api/v1/user/balance', { key: provider.saved!.access_token })).body.data.balance).toBe('4.9100');
      await client.close();

      // The member sees the grant and its key (named after the client).
      const grants = await asBrowser(s, member)('GET', '/api/v1/auth/oauth-grants');
      const grant = grants.body.data.find((g: any) => g.clientId === provider.info!.client_id);
      expect(grant).toMatchObject({ clientName: 'Test Agent', scopes: ['tasks:read', 'tasks:write', 'files:write', 'balance:read'], revokedAt: null });
      const keys = await asBrowser(s, member)('GET', '/api/v1/keys');
      expect(keys.body.data.find((k: any) => k.id === grant.keyId)).toMatchObject({ name: 'OAuth: Test Agent' });
    });

    it('PKCE: a wrong verifier is refused; the code is used once (a second use revokes what it gave)', async () => {
      const { clientId, verifier, code, exchange } = await consented('tasks:read');
      const wrong = await exchange(pkce().verifier);
      expect(wrong).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge (S256) of the authorization request' },
      });
      const right = await exchange(verifier);
      expect(right.status).toBe(200);
      expect(right.headers.get('cache-control')).toBe('no-store');
      expect((await mcpTools(right.body.access_token)).status).toBe(200);
      const again = await exchange(verifier);
      expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await mcpTools(right.body.access_token)).status).toBe(401);
      // Nothing can use the grant any more: it and its key are revoked too, not left live in the lists.
      const { grant, key } = await grantOf(clientId);
      expect(grant.revokedAt).not.toBeNull();
      expect(key.revokedAt).not.toBeNull();
      const other = await register();
      expect(
        (await form('/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: other, code_verifier: verifier })).body.error,
      ).toBe('invalid_grant');
    });

    it('scopes limit the token like a key: a tasks:read token lists only read tools and cannot create', async () => {
      const t = await tokensFor('tasks:read');
      expect(t.scope).toBe('tasks:read');
      const { names } = await mcpTools(t.access_token);
      expect(names).toEqual(['calculate_price', 'get_model', 'get_price_list', 'get_task', 'list_models', 'list_tasks', 'wait_for_task']);
      const r = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${t.access_token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'create_task', arguments: { model: 'suno-v6', input: { prompt: 'x' } } },
        }),
      });
      const result = ((await r.json()) as any).result;
      expect(result).toMatchObject({ isError: true, structuredContent: { code: 403, error: 'permission_error' } });
      expect(result.content[0].text).toBe('this API key lacks the scope tasks:write (it has: tasks:read)');
      const rest = await s.call('POST', '/api/v1/jobs/createTask', { key: t.access_token, body: { model: 'suno-v6', input: { prompt: 'x' } } });
      expect(rest.status).toBe(403);
    });

    it('refresh rotates: the new pair works, a reused refresh token is refused and ends the grant', async () => {
      const t = await tokensFor('tasks:read balance:read');
      const refresh = (token: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: t.clientId });
      const next = await refresh(t.refresh_token);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(next.body.refresh_token).not.toBe(t.refresh_token);
      expect(next.body.scope).toBe('tasks:read balance:read');
      expect((await mcpTools(next.body.access_token)).status).toBe(200);
      const reused = await refresh(t.refresh_token);
      expect(reused).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'this refresh token was already used; its grant, every token of it and its key are now revoked' },
      });
      expect((await mcpTools(next.body.access_token)).status).toBe(401);
      expect((await refresh(next.body.refresh_token)).body.error).toBe('invalid_grant');
      const wider = await tokensFor('tasks:read');
      expect(
        (await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: wider.refresh_token, client_id: wider.clientId, scope: 'tasks:write' })).body,
      ).toMatchObject({ error: 'invalid_scope' });
    });

    it('revocation answers 401 at once: a revoked access token, and every token of a grant the member revokes', async () => {
      const a = await tokensFor('tasks:read');
      expect((await mcpTools(a.access_token)).status).toBe(200);
      expect((await form('/oauth/revoke', { token: a.access_token })).status).toBe(200);
      const refused = await mcpTools(a.access_token);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
      );
      expect(refused.body.error.message).toMatch(/^this access token has been revoked/);
      expect((await form('/oauth/revoke', { token: 'gga_unknown' })).status).toBe(200);
      // A revoked refresh token takes its whole grant: no token can come of it, so it and its key are listed as revoked.
      expect((await form('/oauth/revoke', { token: a.refresh_token, client_id: a.clientId })).status).toBe(200);
      const ended = await grantOf(a.clientId);
      expect(ended.grant.revokedAt).not.toBeNull();
      expect(ended.key.revokedAt).toBe(ended.grant.revokedAt);

      const b = await tokensFor('tasks:read balance:read');
      const grants = (await asBrowser(s, member)('GET', '/api/v1/auth/oauth-grants')).body.data;
      const grant = grants.find((g: any) => g.clientId === b.clientId);
      const revoked = await asBrowser(s, member)('POST', `/api/v1/auth/oauth-grants/${grant.id}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.revokedAt).not.toBeNull();
      expect((await mcpTools(b.access_token)).status).toBe(401);
      expect((await s.call('GET', '/api/v1/user/balance', { key: b.access_token })).status).toBe(401);
      expect((await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: b.refresh_token, client_id: b.clientId })).body.error).toBe(
        'invalid_grant',
      );
      const key = (await asBrowser(s, member)('GET', '/api/v1/keys')).body.data.find((k: any) => k.id === grant.keyId);
      expect(key.revokedAt).not.toBeNull();
      expect((await asBrowser(s, member)('POST', '/api/v1/auth/oauth-grants/grt_nope/revoke')).status).toBe(404);
    });

    it("a consent whose code is never exchanged ends when the code expires: the engine's sweep revokes its grant and key", async () => {
      const { clientId, verifier, exchange } = await consented('tasks:read');
      expect((await exchange(pkce().verifier)).status).toBe(400); // a failed exchange gives nothing and keeps nothing alive
      const before = await grantOf(clientId);
      expect(before.grant.revokedAt).toBeNull();
      expect(before.key).toMatchObject({ name: 'OAuth: Script', revokedAt: null });

      // Still exchangeable a little before the code's end: the sweep leaves it alone.
      clock.advance(CODE_TTL_MS - 5_000);
      await s.services.engine.tick();
      expect((await grantOf(clientId)).key.revokedAt).toBeNull();
      clock.advance(5_000);
      await s.services.engine.tick();
      const after = await grantOf(clientId);
      expect(after.grant.revokedAt).not.toBeNull();
      expect(after.key.revokedAt).toBe(after.grant.revokedAt);
      // Ended as of the code's expiry (when it stopped being usable), not whenever a sweep came by.
      expect(Date.parse(after.grant.revokedAt)).toBe(Date.parse(after.grant.createdAt) + CODE_TTL_MS);
      const late = await exchange(verifier);
      expect(late.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/^this authorization code expired at /) });
      // Sweeping again changes nothing.
      await s.services.engine.tick();
      expect(await grantOf(clientId)).toEqual(after);
    });

    it('the sweep spares an exchanged consent (its token keeps working past the code lifetime), and several sweeps at once end each one once', async () => {
      const t = await tokensFor('tasks:read balance:read');
      await s.services.engine.tick(); // nothing of earlier tests left for the sweep below
      const clientIds = [(await consented('tasks:read')).clientId, (await consented('tasks:read')).clientId, (await consented('tasks:read')).clientId];
      clock.advance(CODE_TTL_MS);
      const now = clock.now();
      const ended = await Promise.all([1, 2, 3].map(() => endUnexchangedConsents(s.services.database, now)));
      expect(ended.reduce((a, b) => a + b)).toBe(3);
      for (const id of clientIds) expect((await grantOf(id)).key.revokedAt).not.toBeNull();

      const kept = await grantOf(t.clientId);
      expect(kept.grant.revokedAt).toBeNull();
      expect(kept.key.revokedAt).toBeNull();
      expect((await mcpTools(t.access_token)).status).toBe(200);
      expect((await s.call('GET', '/api/v1/user/balance', { key: t.access_token })).status).toBe(200);
      const next = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect((await mcpTools(next.body.access_token)).status).toBe(200);
    });

    it('the consent page: deny, a wrong CSRF token, no session, and requests that cannot be answered', async () => {
      const clientId = await register();
      const { challenge } = pkce();
      const q = (extra: Record<string, string> = {}) =>
        `${s.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'x', ...extra })}`;
      const denied = await consent(q(), 'deny');
      expect(denied.status).toBe(302);
      expect(Object.fromEntries(new URL(denied.location!).searchParams)).toMatchObject({ error: 'access_denied', state: 'x' });
      const forged = await consent(q(), 'allow', { csrf: 'forged' });
      expect(forged.status).toBe(403);
      expect(forged.body).toContain('wrong CSRF token');

      const anonymous = await fetch(q());
      expect(anonymous.status).toBe(200);
      const signIn = await anonymous.text();
      expect(signIn).toContain('Sign in');
      // The console's sign-in page reads ?next= (issue 39 finding 13) and comes back here.
      expect(signIn).toContain(`href="/signin?next=${encodeURIComponent('/oauth/authorize?')}`);
      const post = await fetch(`${s.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'decision=allow',
      });
      expect(post.status).toBe(403);

      const plain = await fetch(q({ code_challenge_method: 'plain' }), { redirect: 'manual', headers: { cookie: member.cookie } });
      expect(plain.status).toBe(302);
      expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
      const scope = await fetch(q({ scope: 'keys:write' }), { redirect: 'manual', headers: { cookie: member.cookie } });
      expect(new URL(scope.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
      const elsewhere = await fetch(q({ redirect_uri: 'https://evil.example/cb' }), { redirect: 'manual', headers: { cookie: member.cookie } });
      expect(elsewhere.status).toBe(400);
      expect(await elsewhere.text()).toContain('is not one the client registered');
      const unknown = await fetch(q({ client_id: 'cli_nope' }), { redirect: 'manual' });
      expect(unknown.status).toBe(400);
    });

    it('an access token expires after OAUTH_ACCESS_TOKEN_SECONDS (401 naming the refresh); the refresh token gives a working one', async () => {
      const t = await tokensFor('tasks:read');
      clock.advance(3600_000 - 1_000);
      expect((await mcpTools(t.access_token)).status).toBe(200);
      clock.advance(1_000);
      const expired = await mcpTools(t.access_token);
      expect(expired.status).toBe(401);
      expect(expired.body.error.message).toMatch(/^this access token expired at .*; get a new one with the refresh token/);
      const next = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
      expect((await mcpTools(next.body.access_token)).status).toBe(200);
    });

    it("a removed member's grants end: access and refresh tokens both refused (issue 39 finding 7)", async () => {
      await s.services.members.create(accountId, 'rem@example.com', 'member', PASSWORD);
      const owner = member;
      member = await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'rem@example.com', password: PASSWORD } }));
      let t: Awaited<ReturnType<typeof tokensFor>>;
      try {
        t = await tokensFor('tasks:read');
      } finally {
        member = owner;
      }
      expect((await mcpTools(t.access_token)).status).toBe(200);
      await s.services.members.remove('rem@example.com', accountId);
      expect((await mcpTools(t.access_token)).status).toBe(401);
      const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
    });

    it('disabling the account ends its grants for good: enabled again, the old tokens stay refused', async () => {
      const t = await tokensFor('tasks:read');
      expect((await mcpTools(t.access_token)).status).toBe(200);
      await s.services.accounts.setStatus(accountId, 'disabled');
      await s.services.accounts.setStatus(accountId, 'active');
      expect((await mcpTools(t.access_token)).status).toBe(401);
      const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
      expect(refreshed.body.error).toBe('invalid_grant');
      // A new consent works as before.
      expect((await mcpTools((await tokensFor('tasks:read')).access_token)).status).toBe(200);
    });

    it('dynamic registration refuses unsafe redirect URIs and unknown grant types', async () => {
      const bad = await s.call('POST', '/oauth/register', { body: { redirect_uris: ['http://evil.example/cb'] } });
      expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
      expect((await s.call('POST', '/oauth/register', { body: { redirect_uris: ['javascript:alert(1)'] } })).body.error).toBe('invalid_redirect_uri');
      expect((await s.call('POST', '/oauth/register', { body: {} })).body.error).toBe('invalid_redirect_uri');
      const grant = await s.call('POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] } });
      expect(grant.body).toMatchObject({
        error: 'invalid_client_metadata',
        error_description: 'grant_types may hold only authorization_code, refresh_token (got "client_credentials")',
      });
      const ok = await s.call('POST', '/oauth/register', {
        body: { redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', 'http://localhost:3334/cb'] },
      });
      expect(ok).toMatchObject({ status: 201, body: { client_name: 'MCP client', token_endpoint_auth_method: 'none' } });
      expect((await form('/oauth/token', { grant_type: 'password' })).body.error).toBe('unsupported_grant_type');
    });
  });
}
