import type { ApiDialect, Database } from '../store/index.js';
import type { Clock } from '../clock.js';
import { requireScope } from './roles.js';
import { Errors } from '../errors.js';
import { budgetOf, hashKey, type Scope } from './keys.js';
import type { KeyBudget } from './budgets.js';
import type { KeyBudgetPeriod, MemberRole } from '../store/index.js';
import { precompile } from '../store/index.js';
import { boundedCache } from '../cache.js';
import type { KeyActor } from './custody.js';

/** The caller behind a valid key. */
export interface Principal {
  accountId: string;
  keyId: string;
  scopes: Scope[] | null;
  models: string[] | null;
  /** The account's own per-key rate limits (null: the configured default). */
  limits: { write: number | null; read: number | null };
  /** The account's dialect (decision 0402): a task the key creates is fixed in it, or in `kie` under a kie.ai model id. */
  dialect: ApiDialect;
  /** The key's spend limit (createTask checks it in its transaction), or null. */
  budget: KeyBudget | null;
  /** The signed-in member of a session (decision 1903); missing or null for a key and a key-opened session. */
  member?: { id: string; role: MemberRole } | null;
}

/** OAuth access tokens start with this (API keys with `gg_`); decision 2202. */
export const ACCESS_TOKEN_PREFIX = 'gga_';
const BEARER = /^Bearer +([A-Za-z0-9_-]{1,200}) *$/;
const LAST_USED_EVERY_MS = 60_000;
/** Most keys remembered at once; past it the least recently used go (a flood of distinct valid keys only costs lookups). */
const CACHE_MAX_KEYS = 10_000;

type KeyRow = {
  id: string;
  account_id: string;
  scopes: string | null;
  models: string | null;
  revoked_at: number | null;
  status: string;
  rate_write_limit: number | null;
  rate_read_limit: number | null;
  dialect: ApiDialect;
  expires_at: number | null;
  budget_micros: number | null;
  budget_period: KeyBudgetPeriod | null;
};

/** The columns of a KeyRow: the key's and its account's, for a key and for the key behind an OAuth token alike. */
const KEY_COLUMNS = [
  'api_keys.id',
  'api_keys.account_id',
  'api_keys.scopes',
  'api_keys.models',
  'api_keys.revoked_at',
  'api_keys.expires_at',
  'api_keys.budget_micros',
  'api_keys.budget_period',
  'accounts.status',
  'accounts.rate_write_limit',
  'accounts.rate_read_limit',
  'accounts.dialect',
] as const;

/** A looked-up key as the requests of the next moments see it: the row, parsed once, and when it was read. */
interface CachedKey {
  row: KeyRow;
  scopes: Scope[] | null;
  models: string[] | null;
  budget: KeyBudget | null;
  readAt: number;
}

/**
 * Turns an Authorization header into a Principal. Missing, malformed, unknown, revoked and expired keys
 * are 401 (a revoked key is no credential: see docs/decisions/0002); a disabled account or a
 * missing scope is 403 permission_error.
 *
 * A found key is remembered for `cacheMs` (AUTH_CACHE_MS; docs/decisions/0008): changes made in this
 * process (`forget`) apply to the next request, changes made by another process (the CLI, another
 * server) within `cacheMs`. Unknown keys are never remembered, so a new key works at once.
 */
export class Authenticator {
  private readonly lastUsedWritten = boundedCache<string, number>(CACHE_MAX_KEYS);
  private readonly cache = boundedCache<string, CachedKey>(CACHE_MAX_KEYS);
  private readonly findKey;
  private readonly findToken;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly cacheMs = 0,
  ) {
    this.findKey = precompile(database.db, 1, (hash) =>
      database.db.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id').select(KEY_COLUMNS).where('api_keys.hash', '=', hash),
    );
    // An OAuth access token (decision 2202): its grant's key, plus the token's and the grant's own state. Never cached, so a revocation applies at once everywhere.
    this.findToken = precompile(database.db, 1, (hash) =>
      database.db
        .selectFrom('oauth_tokens')
        .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
        .innerJoin('api_keys', 'api_keys.id', 'oauth_grants.key_id')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select([
          ...KEY_COLUMNS,
          'oauth_tokens.expires_at as token_expires_at',
          'oauth_tokens.revoked_at as token_revoked_at',
          'oauth_grants.revoked_at as grant_revoked_at',
        ])
        .where('oauth_tokens.hash', '=', hash)
        .where('oauth_tokens.kind', '=', 'access'),
    );
  }

  /**
   * The caller of an API key or an OAuth access token (`gga_...`, decision 2202: it acts as the key
   * its grant made). `scope` null checks only that the credential is valid (the MCP endpoint lists
   * tools by the scopes the principal has).
   */
  async authenticate(header: string | undefined, scope: Scope | null): Promise<Principal> {
    if (header === undefined || header === '') {
      throw Errors.unauthenticated('missing API key: send the header Authorization: Bearer <API key>');
    }
    const m = BEARER.exec(header);
    if (!m) throw Errors.unauthenticated('malformed Authorization header: expected "Bearer <API key>"');
    const { row, scopes, models, budget } = m[1]!.startsWith(ACCESS_TOKEN_PREFIX) ? await this.lookupToken(m[1]!) : await this.lookup(m[1]!);
    if (row.revoked_at != null) throw Errors.unauthenticated('this API key has been revoked');
    // Checked on every request against the clock, so a remembered key expires on time too.
    if (row.expires_at != null && this.clock.now() >= Number(row.expires_at)) {
      throw Errors.unauthenticated(`this API key expired at ${new Date(Number(row.expires_at)).toISOString()}; ask the operator for a new key`);
    }
    if (row.status !== 'active') throw Errors.forbidden(`account ${row.account_id} is disabled; contact the operator`);
    requireScope(scopes, scope, 'this API key');
    this.touch(row.id);
    return {
      accountId: row.account_id,
      keyId: row.id,
      scopes,
      models,
      limits: { write: row.rate_write_limit, read: row.rate_read_limit },
      dialect: row.dialect,
      budget,
    };
  }

  /** Drops every remembered key: called after a change to keys or accounts made in this process. */
  forget(): void {
    this.cache.clear();
  }

  /** The key's row from the cache while it is fresh, else from the database (by hash); unknown keys throw 401. */
  private async lookup(secret: string): Promise<CachedKey> {
    const now = this.clock.now();
    const hit = this.cache.get(secret);
    if (hit && now - hit.readAt < this.cacheMs) return hit;
    const [row] = await this.findKey(hashKey(secret));
    if (!row) {
      this.cache.delete(secret);
      throw Errors.unauthenticated('invalid API key');
    }
    const entry: CachedKey = {
      row: row as KeyRow,
      scopes: row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null,
      models: row.models ? (JSON.parse(row.models) as string[]) : null,
      budget: budgetOf(row as KeyRow),
      readAt: now,
    };
    if (this.cacheMs > 0) this.cache.set(secret, entry);
    return entry;
  }

  /** The key behind an OAuth access token; a revoked or expired token (or grant, or key) is 401. */
  private async lookupToken(secret: string): Promise<CachedKey> {
    const [row] = await this.findToken(hashKey(secret));
    if (!row) throw Errors.unauthenticated('invalid access token');
    if (row.token_revoked_at != null || row.grant_revoked_at != null || row.revoked_at != null) {
      throw Errors.unauthenticated('this access token has been revoked; authorize the client again');
    }
    if (this.clock.now() >= Number(row.token_expires_at)) {
      throw Errors.unauthenticated(
        `this access token expired at ${new Date(Number(row.token_expires_at)).toISOString()}; get a new one with the refresh token`,
      );
    }
    return {
      row: row as KeyRow,
      scopes: row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null,
      models: row.models ? (JSON.parse(row.models) as string[]) : null,
      budget: budgetOf(row as KeyRow),
      readAt: this.clock.now(),
    };
  }

  /** Records last use at most once a minute per key per process, off the request's path. */
  private touch(keyId: string): void {
    const now = this.clock.now();
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.database
      .tx((w) => w.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', keyId).execute(), { atomic: false })
      .catch(() => this.lastUsedWritten.delete(keyId));
  }
}

/** Who acts on keys for this caller (decision 1907): its member, or else its key (a key-opened session: the key that opened it). */
export function actorOf(p: Principal): KeyActor {
  return p.member
    ? { kind: 'member', accountId: p.accountId, memberId: p.member.id, role: p.member.role }
    : { kind: 'key', accountId: p.accountId, keyId: p.keyId };
}

/** True when the key may use `model` (no allowlist means every model). */
export function keyAllowsModel(p: Principal, model: string): boolean {
  return p.models === null || p.models.includes(model);
}
