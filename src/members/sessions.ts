import type { Kysely } from 'kysely';
import type { ApiDialect, Database, DB, MemberRole, MemberSessionsTable } from '../store/index.js';
import { precompile } from '../store/index.js';
import type { Clock } from '../clock.js';
import { budgetOf, type KeyBudget, type Scope } from '../accounts/index.js';
import { Errors } from '../errors.js';
import { randomId } from '../ids.js';
import { hashToken, newToken } from './tokens.js';

/** A live session as a request sees it. */
export interface SessionInfo {
  id: string;
  accountId: string;
  accountName: string;
  /** The member signed in; null for a session opened with an API key. */
  member: { id: string; email: string; role: MemberRole } | null;
  keyId: string | null;
  /** null: every scope. */
  scopes: Scope[] | null;
  models: string[] | null;
  csrf: string;
  createdAt: number;
  expiresAt: number;
  limits: { write: number | null; read: number | null };
  /** The account's dialect (decision 0402): tasks created in the session are fixed in it. */
  dialect: ApiDialect;
  /** The budget of the key that opened the session (decision 1902); null for a member's session. */
  budget: KeyBudget | null;
}

/** What a member sees of one of their sessions (never the token). */
export interface SessionView {
  id: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  address: string | null;
  userAgent: string | null;
  current: boolean;
}

const iso = (ms: number | null) => (ms == null ? null : new Date(Number(ms)).toISOString());

export function sessionView(row: MemberSessionsTable, currentId?: string): SessionView {
  return {
    id: row.id,
    createdAt: iso(row.created_at)!,
    expiresAt: iso(row.expires_at)!,
    revokedAt: iso(row.revoked_at),
    address: row.address,
    userAgent: row.user_agent,
    current: row.id === currentId,
  };
}

/** Where a session is opened from (shown in the member's list of sessions). */
export interface ClientMeta {
  address: string | null;
  userAgent: string | null;
}

/**
 * Browser sessions. Every request reads its session from the database (no cache): a revoked
 * session, from this process or another (the CLI), is refused at the next request.
 */
export class Sessions {
  private readonly find;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {
    const { db } = database;
    this.find = precompile(db, 1, (hash) =>
      db
        .selectFrom('member_sessions as s')
        .innerJoin('accounts as a', 'a.id', 's.account_id')
        .leftJoin('members as m', 'm.id', 's.member_id')
        .leftJoin('api_keys as k', 'k.id', 's.key_id')
        .select([
          's.id',
          's.account_id',
          's.member_id',
          's.key_id',
          's.scopes',
          's.csrf',
          's.created_at',
          's.expires_at',
          's.revoked_at',
          'a.name as account_name',
          'a.status',
          'a.rate_write_limit',
          'a.rate_read_limit',
          'a.dialect',
          'm.email',
          'm.role',
          'k.revoked_at as key_revoked_at',
          'k.models',
          'k.expires_at as key_expires_at',
          'k.budget_micros',
          'k.budget_period',
        ])
        .where('s.token_hash', '=', hash),
    );
  }

  /** Opens a session inside the caller's transaction; returns the cookie's token (given once) and the row. */
  async open(
    trx: Kysely<DB>,
    who: { accountId: string; memberId: string | null; keyId: string | null; scopes: Scope[] | null },
    meta: ClientMeta,
  ): Promise<{ token: string; row: MemberSessionsTable }> {
    const token = newToken();
    const now = this.clock.now();
    const row: MemberSessionsTable = {
      id: randomId('ses_', 12),
      token_hash: hashToken(token),
      account_id: who.accountId,
      member_id: who.memberId,
      key_id: who.keyId,
      scopes: who.scopes ? JSON.stringify(who.scopes) : null,
      csrf: newToken(),
      created_at: now,
      expires_at: now + this.ttlMs,
      revoked_at: null,
      address: meta.address?.slice(0, 100) ?? null,
      user_agent: meta.userAgent?.slice(0, 300) ?? null,
    };
    await trx.insertInto('member_sessions').values(row).execute();
    return { token, row };
  }

  /** The live session of a cookie's token; 401 when it is unknown, expired or revoked (or its key is), 403 when the account is disabled. */
  async get(token: string): Promise<SessionInfo> {
    const [row] = await this.find(hashToken(token));
    const again = 'sign in again';
    if (!row) throw Errors.unauthenticated(`session unknown: ${again}`);
    if (row.revoked_at != null) throw Errors.unauthenticated(`this session has been revoked: ${again}`);
    if (Number(row.expires_at) <= this.clock.now()) throw Errors.unauthenticated(`this session has expired: ${again}`);
    if (row.key_id != null && row.key_revoked_at != null) throw Errors.unauthenticated(`the API key that opened this session has been revoked: ${again}`);
    if (row.key_id != null && row.key_expires_at != null && Number(row.key_expires_at) <= this.clock.now()) {
      throw Errors.unauthenticated(`the API key that opened this session has expired: ${again}`);
    }
    if (row.member_id != null && row.email == null) throw Errors.unauthenticated(`the member of this session has been removed`);
    if (row.status !== 'active') throw Errors.forbidden(`account ${row.account_id} is disabled; contact the operator`);
    return {
      id: row.id,
      accountId: row.account_id,
      accountName: row.account_name,
      member: row.member_id != null ? { id: row.member_id, email: row.email!, role: row.role! } : null,
      keyId: row.key_id,
      scopes: row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null,
      models: row.models ? (JSON.parse(row.models) as string[]) : null,
      csrf: row.csrf,
      createdAt: Number(row.created_at),
      expiresAt: Number(row.expires_at),
      limits: { write: row.rate_write_limit, read: row.rate_read_limit },
      dialect: row.dialect,
      budget: budgetOf(row),
    };
  }

  /** The member's sessions that are still live, newest first. */
  async list(memberId: string, currentId?: string): Promise<SessionView[]> {
    const rows = await this.database.db
      .selectFrom('member_sessions')
      .selectAll()
      .where('member_id', '=', memberId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', this.clock.now())
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((r) => sessionView(r, currentId));
  }

  /** Revokes one session; with `memberId`, only one of that member's (else 404). Revoking twice keeps the first time. */
  async revoke(id: string, memberId?: string): Promise<SessionView> {
    return this.database.tx(async (trx) => {
      let q = trx.selectFrom('member_sessions').selectAll().where('id', '=', id);
      if (memberId !== undefined) q = q.where('member_id', '=', memberId);
      const row = await q.executeTakeFirst();
      if (!row) throw Errors.notFound(`no session ${JSON.stringify(id)}${memberId ? ' of yours' : ''}`);
      if (row.revoked_at == null) {
        row.revoked_at = this.clock.now();
        await trx.updateTable('member_sessions').set({ revoked_at: row.revoked_at }).where('id', '=', id).execute();
      }
      return sessionView(row);
    });
  }

  /** Revokes every live session of a member inside the caller's transaction (but `except`); returns how many. */
  async revokeAllOf(trx: Kysely<DB>, memberId: string, except?: string): Promise<number> {
    let q = trx.updateTable('member_sessions').set({ revoked_at: this.clock.now() }).where('member_id', '=', memberId).where('revoked_at', 'is', null);
    if (except) q = q.where('id', '!=', except);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}
