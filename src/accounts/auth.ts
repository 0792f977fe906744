import type { Database } from '../store/db.js';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';
import { hashKey, type Scope } from './keys.js';
import { precompile } from '../store/prepared.js';

/** The caller behind a valid key. */
export interface Principal {
  accountId: string;
  keyId: string;
  scopes: Scope[] | null;
  models: string[] | null;
  /** The account's own per-key rate limits (null: the configured default). */
  limits: { write: number | null; read: number | null };
}

const BEARER = /^Bearer +([A-Za-z0-9_-]{1,200}) *$/;
const LAST_USED_EVERY_MS = 60_000;

/**
 * Turns an Authorization header into a Principal. Missing, malformed, unknown and revoked keys
 * are 401 (a revoked key is no credential: see docs/decisions/0002); a disabled account or a
 * missing scope is 403 permission_error.
 */
export class Authenticator {
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly findKey;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {
    this.findKey = precompile(database.db, 1, (hash) =>
      database.db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select([
          'api_keys.id',
          'api_keys.account_id',
          'api_keys.scopes',
          'api_keys.models',
          'api_keys.revoked_at',
          'accounts.status',
          'accounts.rate_write_limit',
          'accounts.rate_read_limit',
        ])
        .where('api_keys.hash', '=', hash),
    );
  }

  async authenticate(header: string | undefined, scope: Scope): Promise<Principal> {
    if (header === undefined || header === '') {
      throw Errors.unauthenticated('missing API key: send the header Authorization: Bearer <API key>');
    }
    const m = BEARER.exec(header);
    if (!m) throw Errors.unauthenticated('malformed Authorization header: expected "Bearer <API key>"');
    const [row] = await this.findKey(hashKey(m[1]!));
    if (!row) throw Errors.unauthenticated('invalid API key');
    if (row.revoked_at != null) throw Errors.unauthenticated('this API key has been revoked');
    if (row.status !== 'active') throw Errors.forbidden(`account ${row.account_id} is disabled; contact the operator`);
    const scopes = row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null;
    if (scopes && !scopes.includes(scope)) {
      throw Errors.forbidden(`this API key lacks the scope ${scope} (it has: ${scopes.join(', ')})`);
    }
    this.touch(row.id);
    return {
      accountId: row.account_id,
      keyId: row.id,
      scopes,
      models: row.models ? (JSON.parse(row.models) as string[]) : null,
      limits: { write: row.rate_write_limit, read: row.rate_read_limit },
    };
  }

  /** Records last use at most once a minute per key per process, off the request's path. */
  private touch(keyId: string): void {
    const now = this.clock.now();
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.database.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', keyId)
      .execute()
      .catch(() => this.lastUsedWritten.delete(keyId));
  }
}

/** True when the key may use `model` (no allowlist means every model). */
export function keyAllowsModel(p: Principal, model: string): boolean {
  return p.models === null || p.models.includes(model);
}
