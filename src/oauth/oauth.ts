import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ACCESS_TOKEN_PREFIX, hashKey, type Accounts, type Scope } from '../accounts/index.js';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';
import { randomId } from '../ids.js';
import type { Database, DB, OAuthGrantsTable } from '../store/index.js';
import { endGrant, endGrantById } from './grants.js';
import { OAuthError, checkClientMetadata, readScopes, type ClientMetadata } from './rules.js';

/** The scopes a client may ask for: what an agent needs over MCP (decision 2202). */
export const OAUTH_SCOPES = ['tasks:read', 'tasks:write', 'files:write', 'balance:read'] as const satisfies readonly Scope[];

/** How long an authorization code may be exchanged; a consent whose code outlives it unexchanged is ended by the sweep (grants.ts). */
export const CODE_TTL_MS = 10 * 60 * 1000;
const REFRESH_PREFIX = 'ggr_';
const CODE_PREFIX = 'ggc_';

/** What the OAuth service needs from the settings. */
export interface OAuthSettings {
  /** The resource the tokens are for: `{PRICING_BASE_URL}/mcp`. */
  resource: string;
  /** The issuer: PUBLIC_BASE_URL. */
  issuer: string;
  accessTtlMs: number;
  refreshTtlMs: number;
}

/** A checked authorization request (GET and POST /oauth/authorize). */
export interface AuthorizeRequest {
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string;
  resource: string;
}

/** The member who answers the consent page. */
export interface Consenter {
  accountId: string;
  memberId: string;
  role: 'owner' | 'member' | 'operator';
}

/** A grant as its member sees it (GET /api/v1/auth/oauth-grants). */
export interface GrantView {
  id: string;
  clientId: string;
  clientName: string;
  scopes: Scope[];
  keyId: string;
  createdAt: string;
  revokedAt: string | null;
}

/** The answer of the token endpoint (RFC 6749 §5.1). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const iso = (ms: number | null) => (ms == null ? null : new Date(Number(ms)).toISOString());
const secret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * GenGate as the OAuth 2.1 authorization server of its own MCP endpoint (decision 2202): dynamic
 * client registration, authorization code with PKCE S256, refresh token rotation, revocation. A
 * member's consent makes an API key of the account with the granted scopes (named after the
 * client); the grant's access tokens act as that key, so they are scoped, rate limited and
 * budgeted like keys, and revoking the grant (or the key) ends them at once.
 */
export class OAuth {
  constructor(
    private readonly database: Database,
    private readonly accounts: Accounts,
    private readonly clock: Clock,
    readonly settings: OAuthSettings,
  ) {}

  /** POST /oauth/register (RFC 7591): a public client (no secret) with its exact redirect URIs. */
  async register(body: unknown): Promise<Record<string, unknown>> {
    const meta: ClientMetadata = checkClientMetadata(body);
    const now = this.clock.now();
    const id = randomId('cli_', 12);
    await this.database.tx((trx) =>
      trx
        .insertInto('oauth_clients')
        .values({ id, name: meta.name, redirect_uris: JSON.stringify(meta.redirectUris), created_at: now })
        .execute(),
    );
    return {
      client_id: id,
      client_id_issued_at: Math.floor(now / 1000),
      client_name: meta.name,
      redirect_uris: meta.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: meta.scope ?? OAUTH_SCOPES.join(' '),
    };
  }

  /**
   * Checks an authorization request. An unknown client or a redirect URI it did not register is
   * shown to the member (`redirect: false`: never sent to an unchecked address); any other fault
   * goes back to the client's redirect URI as `error`.
   */
  async checkAuthorize(q: Record<string, unknown>): Promise<AuthorizeRequest> {
    const clientId = str(q.client_id);
    if (!clientId) throw new OAuthError(400, 'invalid_request', 'client_id is required: register the client with POST /oauth/register first', false);
    const client = await this.database.db.selectFrom('oauth_clients').selectAll().where('id', '=', clientId).executeTakeFirst();
    if (!client)
      throw new OAuthError(400, 'invalid_client', `unknown client_id ${JSON.stringify(clientId.slice(0, 100))}; register with POST /oauth/register`, false);
    const registered = JSON.parse(client.redirect_uris) as string[];
    const given = str(q.redirect_uri);
    if (given === undefined && registered.length !== 1) {
      throw new OAuthError(400, 'invalid_request', `redirect_uri is required: the client registered ${registered.length} redirect URIs`, false);
    }
    const redirectUri = given ?? registered[0]!;
    if (!registered.includes(redirectUri)) {
      throw new OAuthError(400, 'invalid_request', `redirect_uri ${JSON.stringify(redirectUri.slice(0, 300))} is not one the client registered`, false);
    }
    const state = typeof q.state === 'string' ? q.state : null;
    const back = (error: string, description: string) => new OAuthError(400, error, description, true, { redirectUri, state });
    if (q.response_type !== 'code') throw back('unsupported_response_type', `response_type must be code (got ${JSON.stringify(q.response_type ?? null)})`);
    const challenge = str(q.code_challenge);
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      throw back('invalid_request', 'code_challenge is required: the base64url SHA-256 of the PKCE code_verifier (43 characters)');
    }
    if (q.code_challenge_method !== 'S256') {
      throw back('invalid_request', `code_challenge_method must be S256 (got ${JSON.stringify(q.code_challenge_method ?? null)}); plain is not supported`);
    }
    let scopes: Scope[];
    try {
      scopes = readScopes(q.scope, OAUTH_SCOPES);
    } catch (e) {
      throw back('invalid_scope', (e as Error).message);
    }
    const resource = this.checkResource(q.resource, (m) => back('invalid_target', m));
    return { clientId, clientName: client.name, redirectUri, scopes, state, codeChallenge: challenge, resource };
  }

  /** The member allowed the request: makes the grant's key, the grant and a code; answers the redirect address. */
  async approve(req: AuthorizeRequest, who: Consenter): Promise<string> {
    const code = secret(CODE_PREFIX);
    const now = this.clock.now();
    // One transaction: a consent that fails half way leaves no key. One whose code is never exchanged is ended by the sweep (grants.ts).
    await this.database.tx(async (trx) => {
      const { key } = await this.accounts.createKeyIn(
        trx,
        who.accountId,
        { name: `OAuth: ${req.clientName}`.slice(0, 100), scopes: req.scopes },
        { kind: 'member', accountId: who.accountId, memberId: who.memberId, role: who.role },
      );
      const grantId = randomId('grt_', 12);
      await trx
        .insertInto('oauth_grants')
        .values({
          id: grantId,
          client_id: req.clientId,
          account_id: who.accountId,
          member_id: who.memberId,
          key_id: key.id,
          scopes: JSON.stringify(req.scopes),
          resource: req.resource,
          created_at: now,
          revoked_at: null,
        })
        .execute();
      await this.insertToken(trx, grantId, 'code', code, now + CODE_TTL_MS, { redirect_uri: req.redirectUri, code_challenge: req.codeChallenge });
    });
    return redirectWith(req.redirectUri, { code, state: req.state, iss: this.settings.issuer });
  }

  /** The member denied the request: the client learns `access_denied`. */
  deny(req: AuthorizeRequest): string {
    return redirectWith(req.redirectUri, {
      error: 'access_denied',
      error_description: 'the member denied the request',
      state: req.state,
      iss: this.settings.issuer,
    });
  }

  /** POST /oauth/token: authorization_code (with the PKCE verifier) or refresh_token (rotated: each is used once). */
  async token(body: Record<string, unknown>): Promise<TokenAnswer> {
    const grantType = str(body.grant_type);
    try {
      if (grantType === 'authorization_code') return await this.exchangeCode(body);
      if (grantType === 'refresh_token') return await this.refresh(body);
    } catch (e) {
      if (!(e instanceof Reused)) throw e;
      // A second use of a code or refresh token is taken as a theft (OAuth 2.1 §4.1.3, §4.3.1): every
      // token of the grant goes, and with no refresh token left the grant and its key end too.
      const now = this.clock.now();
      await this.database.tx((w) => endGrantById(w, e.grantId, now));
      throw new OAuthError(400, 'invalid_grant', `this ${e.what} was already used; its grant, every token of it and its key are now revoked`);
    }
    throw new OAuthError(
      400,
      'unsupported_grant_type',
      `grant_type must be authorization_code or refresh_token (got ${JSON.stringify(body.grant_type ?? null)})`,
    );
  }

  /** POST /oauth/revoke (RFC 7009): revokes an access token, or a refresh token with its whole grant (every token, the key); unknown tokens are not an error. */
  async revoke(body: Record<string, unknown>): Promise<void> {
    const token = str(body.token);
    if (!token) throw new OAuthError(400, 'invalid_request', 'token is required: the access or refresh token to revoke');
    const now = this.clock.now();
    await this.database.tx(async (trx) => {
      const row = await trx.selectFrom('oauth_tokens').select(['grant_id', 'kind']).where('hash', '=', hashKey(token)).executeTakeFirst();
      if (!row || row.kind === 'code') return;
      const clientId = str(body.client_id);
      if (clientId && !(await this.grantOfClient(trx, row.grant_id, clientId))) return;
      // Without its refresh token nothing can renew the grant: it ends, key included, rather than stay listed as live.
      if (row.kind === 'refresh') return endGrantById(trx, row.grant_id, now);
      await trx.updateTable('oauth_tokens').set({ revoked_at: now }).where('hash', '=', hashKey(token)).where('revoked_at', 'is', null).execute();
    });
  }

  /** The member's grants, newest first. */
  async listGrants(memberId: string): Promise<GrantView[]> {
    const rows = await this.database.db
      .selectFrom('oauth_grants')
      .innerJoin('oauth_clients', 'oauth_clients.id', 'oauth_grants.client_id')
      .selectAll('oauth_grants')
      .select('oauth_clients.name as client_name')
      .where('member_id', '=', memberId)
      .orderBy('oauth_grants.created_at', 'desc')
      .orderBy('oauth_grants.id', 'desc')
      .execute();
    return rows.map((r) => grantView(r, r.client_name));
  }

  /** Revokes one of the member's grants: the grant, every token of it and its key, in one transaction (404 for another member's). */
  async revokeGrant(id: string, who: Consenter): Promise<GrantView> {
    const row = await this.database.db.selectFrom('oauth_grants').selectAll().where('id', '=', id).where('member_id', '=', who.memberId).executeTakeFirst();
    if (!row) throw Errors.notFound(`no OAuth grant ${JSON.stringify(id.slice(0, 100))} of yours; see GET /api/v1/auth/oauth-grants`);
    const now = this.clock.now();
    await this.database.tx((trx) => endGrant(trx, row, now));
    const client = await this.database.db.selectFrom('oauth_clients').select('name').where('id', '=', row.client_id).executeTakeFirst();
    return grantView({ ...row, revoked_at: row.revoked_at ?? now }, client?.name ?? row.client_id);
  }

  private async exchangeCode(body: Record<string, unknown>): Promise<TokenAnswer> {
    const code = str(body.code);
    const verifier = str(body.code_verifier);
    const clientId = str(body.client_id);
    if (!code) throw new OAuthError(400, 'invalid_request', 'code is required: the code the redirect carried');
    if (!verifier) throw new OAuthError(400, 'invalid_request', 'code_verifier is required: the PKCE verifier whose S256 was the code_challenge');
    if (!clientId) throw new OAuthError(400, 'invalid_request', 'client_id is required');
    const now = this.clock.now();
    return this.database.tx(async (trx) => {
      const row = await this.usable(trx, code, 'code', clientId, now);
      if (str(body.redirect_uri) !== row.redirect_uri) {
        throw new OAuthError(400, 'invalid_grant', 'redirect_uri must be the one of the authorization request');
      }
      const expected = Buffer.from(row.code_challenge ?? '');
      const got = Buffer.from(s256(verifier));
      if (expected.length !== got.length || !timingSafeEqual(expected, got)) {
        throw new OAuthError(400, 'invalid_grant', 'code_verifier does not match the code_challenge (S256) of the authorization request');
      }
      this.checkResource(body.resource, (m) => new OAuthError(400, 'invalid_target', m), row.grant.resource);
      await this.spend(trx, code, 'code', clientId, now);
      return this.issue(trx, row.grant, now);
    });
  }

  private async refresh(body: Record<string, unknown>): Promise<TokenAnswer> {
    const token = str(body.refresh_token);
    const clientId = str(body.client_id);
    if (!token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required');
    if (!clientId) throw new OAuthError(400, 'invalid_request', 'client_id is required');
    const now = this.clock.now();
    return this.database.tx(async (trx) => {
      const row = await this.usable(trx, token, 'refresh', clientId, now);
      if (body.scope !== undefined) {
        const asked = readScopes(body.scope, OAUTH_SCOPES, (m) => new OAuthError(400, 'invalid_scope', m));
        const granted = JSON.parse(row.grant.scopes) as Scope[];
        const extra = asked.find((s) => !granted.includes(s));
        if (extra) throw new OAuthError(400, 'invalid_scope', `scope ${extra} was not granted (granted: ${granted.join(' ')})`);
      }
      await this.spend(trx, token, 'refresh', clientId, now);
      return this.issue(trx, row.grant, now);
    });
  }

  /** A code or refresh token that may be used now, with its grant; a used one throws Reused (the caller revokes the grant's tokens after the rollback). */
  private async usable(trx: Kysely<DB>, token: string, kind: 'code' | 'refresh', clientId: string, now: number) {
    const row = await trx.selectFrom('oauth_tokens').selectAll().where('hash', '=', hashKey(token)).where('kind', '=', kind).executeTakeFirst();
    const what = kind === 'code' ? 'authorization code' : 'refresh token';
    if (!row) throw new OAuthError(400, 'invalid_grant', `unknown ${what}`);
    const grant = await trx.selectFrom('oauth_grants').selectAll().where('id', '=', row.grant_id).executeTakeFirstOrThrow();
    if (grant.client_id !== clientId) throw new OAuthError(400, 'invalid_grant', `this ${what} was issued to another client`);
    if (row.used_at != null) throw new Reused(grant.id, what);
    // Expiry first: the sweep revokes a code that expired unexchanged, and expiry is the reason to tell.
    if (now >= Number(row.expires_at)) throw new OAuthError(400, 'invalid_grant', `this ${what} expired at ${iso(row.expires_at)}`);
    if (row.revoked_at != null || grant.revoked_at != null) throw new OAuthError(400, 'invalid_grant', `this ${what} has been revoked`);
    return { ...row, grant };
  }

  /**
   * Marks a code or refresh token used, if it still is unused and unrevoked: on PostgreSQL another
   * exchange of it or the sweep of expired codes may have come first since `usable` read it, and
   * then this answers as `usable` now does (a second use, a revocation).
   */
  private async spend(trx: Kysely<DB>, token: string, kind: 'code' | 'refresh', clientId: string, now: number): Promise<void> {
    const res = await trx
      .updateTable('oauth_tokens')
      .set({ used_at: now })
      .where('hash', '=', hashKey(token))
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) return;
    await this.usable(trx, token, kind, clientId, now);
    throw new OAuthError(400, 'invalid_grant', `this ${kind === 'code' ? 'authorization code' : 'refresh token'} has been revoked`);
  }

  /** A new access token and refresh token of the grant. */
  private async issue(trx: Kysely<DB>, grant: OAuthGrantsTable, now: number): Promise<TokenAnswer> {
    const access = secret(ACCESS_TOKEN_PREFIX);
    const refresh = secret(REFRESH_PREFIX);
    await this.insertToken(trx, grant.id, 'access', access, now + this.settings.accessTtlMs);
    await this.insertToken(trx, grant.id, 'refresh', refresh, now + this.settings.refreshTtlMs);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: Math.round(this.settings.accessTtlMs / 1000),
      refresh_token: refresh,
      scope: (JSON.parse(grant.scopes) as string[]).join(' '),
    };
  }

  private async insertToken(
    trx: Kysely<DB>,
    grantId: string,
    kind: 'code' | 'access' | 'refresh',
    token: string,
    expiresAt: number,
    extra: { redirect_uri?: string; code_challenge?: string } = {},
  ): Promise<void> {
    await trx
      .insertInto('oauth_tokens')
      .values({
        hash: hashKey(token),
        grant_id: grantId,
        kind,
        created_at: this.clock.now(),
        expires_at: expiresAt,
        used_at: null,
        revoked_at: null,
        redirect_uri: extra.redirect_uri ?? null,
        code_challenge: extra.code_challenge ?? null,
      })
      .execute();
  }

  private async grantOfClient(trx: Kysely<DB>, grantId: string, clientId: string): Promise<boolean> {
    return !!(await trx.selectFrom('oauth_grants').select('id').where('id', '=', grantId).where('client_id', '=', clientId).executeTakeFirst());
  }

  /**
   * The RFC 8707 resource: missing means the MCP endpoint; given, it must be one of the MCP
   * endpoints (`/mcp`, `/mcp/agent`: the same tools, the tokens work on both), or `expected`.
   */
  private checkResource(given: unknown, fail: (msg: string) => OAuthError, expected?: string): string {
    const allowed = expected ? [expected] : [this.settings.resource, `${this.settings.resource}/agent`];
    if (given === undefined || given === '') return allowed[0]!;
    const norm = (u: string) => u.replace(/\/+$/, '');
    const match = typeof given === 'string' ? allowed.find((a) => norm(a) === norm(given)) : undefined;
    if (!match) throw fail(`resource must be ${allowed.join(' or ')}, the MCP endpoint these tokens are for (got ${JSON.stringify(given)})`);
    return match;
  }
}

/** A code or refresh token presented a second time. */
class Reused extends Error {
  constructor(
    readonly grantId: string,
    readonly what: string,
  ) {
    super(`${what} reused`);
  }
}

function grantView(r: OAuthGrantsTable, clientName: string): GrantView {
  return {
    id: r.id,
    clientId: r.client_id,
    clientName,
    scopes: JSON.parse(r.scopes) as Scope[],
    keyId: r.key_id,
    createdAt: iso(r.created_at)!,
    revokedAt: iso(r.revoked_at),
  };
}

/** `uri` with the query parameters added (null ones left out). */
export function redirectWith(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.toString();
}
