import type { Kysely } from 'kysely';
import type { Database, DB, MemberRole, MembersTable, MemberInvitesTable } from '../store/index.js';
import type { Clock } from '../clock.js';
import { capKeysMadeBy, endGrantsOf, hashKey, scopesOfRole, type Accounts, type Scope } from '../accounts/index.js';
import { Errors } from '../errors.js';
import { randomId } from '../ids.js';
import { checkPassword, dummyHash, generatePassword, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import { Sessions, type ClientMeta, type SessionInfo } from './sessions.js';
import { hashToken, newToken, normalEmail } from './tokens.js';
import type { Mailer } from './mail.js';

export const ROLES = ['owner', 'member', 'operator'] as const satisfies readonly MemberRole[];
/** The roles an owner may give through the API; operators are made by the operator (CLI). */
export const INVITE_ROLES = ['owner', 'member'] as const;
export type SignupMode = 'off' | 'invite' | 'open';
/** What a session opened with an API key that has no scopes list may do: look, not spend. */
export const READ_ONLY_SCOPES: Scope[] = ['tasks:read', 'balance:read'];
const INVITE_TTL_MS = 7 * 24 * 3600_000;
const RESET_TTL_MS = 3600_000;

export interface MemberView {
  id: string;
  accountId: string;
  email: string;
  role: MemberRole;
  createdAt: string;
}

export interface InviteView {
  id: string;
  accountId: string;
  email: string;
  role: 'owner' | 'member';
  createdAt: string;
  expiresAt: string;
}

/** A new session: the cookie's token (given once) and what it is. */
export interface SignedIn {
  token: string;
  session: SessionInfo;
}

export interface MembersOptions {
  sessionTtlMs: number;
  signup: SignupMode;
  /** Where the links of emails point (PUBLIC_BASE_URL). */
  publicUrl: string;
  /** null without SMTP_URL: no emails (the CLI creates and resets members). */
  mailer: Mailer | null;
  /** Where a mail that could not be sent is reported. */
  log?: (msg: string) => void;
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();
export const memberView = (r: MembersTable): MemberView => ({ id: r.id, accountId: r.account_id, email: r.email, role: r.role, createdAt: iso(r.created_at) });
const inviteView = (r: MemberInvitesTable): InviteView => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  role: r.role,
  createdAt: iso(r.created_at),
  expiresAt: iso(r.expires_at),
});

/** A checked email address, or a 400 naming the field. */
export function emailOf(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value === '') throw Errors.missingField(field, 'an email address such as ada@example.com');
  const email = normalEmail(value);
  if (!email) throw Errors.invalid(`${field} must be an email address such as ada@example.com (got ${JSON.stringify(value.slice(0, 80))})`);
  return email;
}

function roleOf(value: unknown, allowed: readonly string[], field = 'role'): MemberRole {
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw Errors.invalid(`${field} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as MemberRole;
}

/** A unique index refused the row (two sign-ups with one email at once). */
function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === '23505' || /UNIQUE constraint failed/.test(err?.message ?? '');
}

/** Members of accounts, their passwords, invites, password resets and sign-in (decision 1903). */
export class Members {
  readonly sessions: Sessions;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly opts: MembersOptions,
  ) {
    this.sessions = new Sessions(database, clock, opts.sessionTtlMs);
  }

  /** Makes the dummy hash now (a server does at start), so the first sign-in with an unknown email takes no longer than later ones. */
  prepare(): Promise<unknown> {
    // Never a rejection nobody handles: a stop that closes the hashing pool during this hash ends it quietly.
    return dummyHash().catch(() => undefined);
  }

  get signupMode(): SignupMode {
    return this.opts.signup;
  }

  get mailEnabled(): boolean {
    return this.opts.mailer !== null;
  }

  // --- the operator's side (CLI) ---

  /** Creates a member; without a password one is generated and returned (shown once). */
  async create(accountId: string, email: string, role: string, password?: string): Promise<{ member: MemberView; password?: string }> {
    const address = emailOf(email);
    const r = roleOf(role, ROLES);
    const generated = password === undefined ? generatePassword() : undefined;
    const hash = await hashPassword(checkPassword(password ?? generated));
    const row = await this.database.tx(async (trx) => {
      const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
      if (!account) throw Errors.notFound(`no account ${JSON.stringify(accountId)}`);
      return this.insertMember(trx, accountId, address, r, hash);
    });
    return { member: memberView(row), ...(generated ? { password: generated } : {}) };
  }

  async list(accountId?: string): Promise<MemberView[]> {
    let q = this.database.db.selectFrom('members').selectAll();
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    return (await q.orderBy('created_at').orderBy('id').execute()).map(memberView);
  }

  /** One member by id or email. */
  async get(idOrEmail: string, accountId?: string): Promise<MemberView> {
    return memberView(await this.row(this.database.db, idOrEmail, accountId));
  }

  /** Sets a new password (generated when none is given, and returned once) and revokes every session of the member. */
  async setPassword(idOrEmail: string, password?: string): Promise<{ member: MemberView; password?: string; sessionsRevoked: number }> {
    const generated = password === undefined ? generatePassword() : undefined;
    const hash = await hashPassword(checkPassword(password ?? generated));
    return this.database.tx(async (trx) => {
      const row = await this.row(trx, idOrEmail);
      await this.passwordChanged(trx, row.id, hash, this.clock.now());
      const sessionsRevoked = await this.sessions.revokeAllOf(trx, row.id);
      return { member: memberView(row), ...(generated ? { password: generated } : {}), sessionsRevoked };
    });
  }

  /** Revokes every live session of a member; returns how many. */
  async revokeSessions(idOrEmail: string): Promise<number> {
    return this.database.tx(async (trx) => this.sessions.revokeAllOf(trx, (await this.row(trx, idOrEmail)).id));
  }

  /**
   * Removes a member and ends their sessions. With `accountId` (an owner's call) only a member of
   * that account, never an operator; an account keeps at least one owner.
   */
  async remove(idOrEmail: string, accountId?: string): Promise<MemberView> {
    return this.database
      .tx(async (trx) => {
        const row = await this.row(trx, idOrEmail, accountId);
        if (accountId !== undefined && row.role === 'operator') throw Errors.forbidden('operators are removed by the operator (gengate member remove)');
        if (row.role === 'owner') await this.keepAnOwner(trx, row);
        await this.sessions.revokeAllOf(trx, row.id);
        // Their OAuth clients stop too: access and refresh tokens, and the grants' keys (decision 2315).
        await endGrantsOf(trx, { accountId: row.account_id, memberId: row.id }, this.clock.now());
        await trx.deleteFrom('password_resets').where('member_id', '=', row.id).execute();
        await trx.deleteFrom('members').where('id', '=', row.id).execute();
        return memberView(row);
      })
      .finally(() => this.accounts.forgetKeys());
  }

  /** Changes a member's role within the account (owner or member); an account keeps at least one owner. */
  async setRole(id: string, role: unknown, accountId: string): Promise<MemberView> {
    const r = roleOf(role, INVITE_ROLES);
    return this.database
      .tx(async (trx) => {
        const row = await this.row(trx, id, accountId);
        if (row.role === 'operator') throw Errors.forbidden("an operator's role is changed by the operator (gengate member create/remove)");
        if (row.role === 'owner' && r !== 'owner') await this.keepAnOwner(trx, row);
        await trx.updateTable('members').set({ role: r }).where('id', '=', row.id).execute();
        // The keys they made keep no more than the new role holds (decision 2312).
        const allowed = scopesOfRole(r);
        if (allowed) await capKeysMadeBy(trx, accountId, row.id, allowed);
        return memberView({ ...row, role: r });
      })
      .finally(() => this.accounts.forgetKeys());
  }

  // --- sign-in ---

  /** Email and password to a new session; the same 401 (and about the same time) for an unknown email and a wrong password. */
  async signIn(email: unknown, password: unknown, meta: ClientMeta): Promise<SignedIn> {
    const address = emailOf(email);
    if (typeof password !== 'string' || password === '') throw Errors.missingField('password');
    const row = await this.database.db.selectFrom('members').selectAll().where('email', '=', address).executeTakeFirst();
    const good = await verifyPassword(password.slice(0, 1000), row?.password_hash ?? (await dummyHash()));
    if (!row || !good) throw Errors.unauthenticated('email or password is wrong');
    const rehash = needsRehash(row.password_hash) ? await hashPassword(password) : null;
    const { token } = await this.database.tx(async (trx) => {
      if (rehash) await trx.updateTable('members').set({ password_hash: rehash }).where('id', '=', row.id).execute();
      return this.sessions.open(trx, { accountId: row.account_id, memberId: row.id, keyId: null, scopes: null }, meta);
    });
    return { token, session: await this.sessions.get(token) };
  }

  /** An API key to a session of its account: the key's own scopes when it has a list, else read-only (decision 1903). */
  async signInWithKey(apiKey: unknown, meta: ClientMeta): Promise<SignedIn> {
    if (typeof apiKey !== 'string' || apiKey === '') throw Errors.missingField('apiKey', 'an API key gg_...');
    const key = await this.database.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select(['api_keys.id', 'api_keys.account_id', 'api_keys.scopes', 'api_keys.revoked_at', 'accounts.status'])
      .where('api_keys.hash', '=', hashKey(apiKey.slice(0, 300)))
      .executeTakeFirst();
    if (!key) throw Errors.unauthenticated('invalid API key');
    if (key.revoked_at != null) throw Errors.unauthenticated('this API key has been revoked');
    if (key.status !== 'active') throw Errors.forbidden(`account ${key.account_id} is disabled; contact the operator`);
    const scopes = key.scopes ? (JSON.parse(key.scopes) as Scope[]) : READ_ONLY_SCOPES;
    const { token } = await this.database.tx((trx) => this.sessions.open(trx, { accountId: key.account_id, memberId: null, keyId: key.id, scopes }, meta));
    return { token, session: await this.sessions.get(token) };
  }

  /**
   * SIGNUP=open: a new account (zero balance, a first API key shown once) and its owner.
   * SIGNUP=invite: only with an invite's token (the same as accepting it). SIGNUP=off: refused.
   */
  async signUp(
    body: { email?: unknown; password?: unknown; accountName?: unknown; inviteToken?: unknown },
    meta: ClientMeta,
  ): Promise<SignedIn & { apiKey?: string }> {
    if (this.opts.signup === 'off') throw Errors.forbidden('sign-up is off on this server (SIGNUP=off); ask the operator for an invite');
    if (body.inviteToken !== undefined) return this.acceptInvite(body.inviteToken, body.password, meta);
    if (this.opts.signup === 'invite') throw Errors.forbidden('sign-up needs an invite on this server (SIGNUP=invite): send inviteToken from the invite link');
    const email = emailOf(body.email);
    const name = body.accountName === undefined ? email : body.accountName;
    if (typeof name !== 'string' || !name.trim() || name.trim().length > 200)
      throw Errors.invalid(`accountName must be 1 to 200 characters (got ${JSON.stringify(name)})`);
    const hash = await hashPassword(checkPassword(body.password));
    const { token, apiKey } = await this.database
      .tx(async (trx) => {
        await this.emailFree(trx, email);
        const created = await this.accounts.createIn(trx, name.trim(), 0);
        const member = await this.insertMember(trx, created.account.id, email, 'owner', hash);
        const opened = await this.sessions.open(trx, { accountId: member.account_id, memberId: member.id, keyId: null, scopes: null }, meta);
        return { token: opened.token, apiKey: created.apiKey };
      })
      .catch(this.emailTaken(email));
    return { token, apiKey, session: await this.sessions.get(token) };
  }

  /** An owner invites someone to their account; the link is emailed when SMTP is set and returned to the owner either way. */
  async invite(accountId: string, invitedBy: string | null, email: unknown, role: unknown): Promise<{ invite: InviteView; url: string; emailed: boolean }> {
    const address = emailOf(email);
    const r = roleOf(role ?? 'member', INVITE_ROLES) as 'owner' | 'member';
    const token = newToken();
    const now = this.clock.now();
    const row: MemberInvitesTable = {
      id: randomId('inv_', 9),
      token_hash: hashToken(token),
      account_id: accountId,
      email: address,
      role: r,
      invited_by: invitedBy,
      created_at: now,
      expires_at: now + INVITE_TTL_MS,
      accepted_at: null,
    };
    // No emailFree here: the answer is the same whether or not the email is a member somewhere
    // (decision 2314); accepting the invite of a taken email is refused to the one who accepts it.
    const account = await this.database.tx(async (trx) => {
      await trx.insertInto('member_invites').values(row).execute();
      return trx.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow();
    });
    const url = `${this.opts.publicUrl}/accept-invite#token=${token}`;
    // A fixed subject: nothing an account's owner types reaches it (decision 2314).
    const emailed = this.mail(
      address,
      'You are invited to an account on GenGate',
      `You are invited to join ${account.name} as ${r}.\n\nOpen this link to choose a password (valid 7 days):\n${url}\n`,
    );
    return { invite: inviteView(row), url, emailed };
  }

  /** The account's pending invites (neither accepted nor expired), oldest first; never their tokens. */
  async listInvites(accountId: string): Promise<InviteView[]> {
    const rows = await this.database.db
      .selectFrom('member_invites')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', this.clock.now())
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(inviteView);
  }

  /** Withdraws a pending invite of the account: its link is refused from now on (as an unknown one). */
  async revokeInvite(id: string, accountId: string): Promise<InviteView> {
    return this.database.tx(async (trx) => {
      const row = await trx
        .deleteFrom('member_invites')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('accepted_at', 'is', null)
        .where('expires_at', '>', this.clock.now())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw Errors.notFound(`no pending invite ${JSON.stringify(id)} in this account`);
      return inviteView(row);
    });
  }

  /** Accepts an invite once: the member is created with the invite's email and role, and signed in. */
  async acceptInvite(token: unknown, password: unknown, meta: ClientMeta): Promise<SignedIn> {
    if (typeof token !== 'string' || token === '') throw Errors.missingField('inviteToken', 'the token of the invite link');
    const hash = await hashPassword(checkPassword(password));
    const now = this.clock.now();
    let email = '';
    const opened = await this.database
      .tx(async (trx) => {
        const invite = await trx.selectFrom('member_invites').selectAll().where('token_hash', '=', hashToken(token)).executeTakeFirst();
        if (!invite || invite.accepted_at != null || Number(invite.expires_at) <= now) {
          throw Errors.invalid('inviteToken: this invite is unknown, used or expired; ask the account owner for a new one');
        }
        email = invite.email;
        await this.emailFree(trx, invite.email);
        const done = await trx
          .updateTable('member_invites')
          .set({ accepted_at: now })
          .where('id', '=', invite.id)
          .where('accepted_at', 'is', null)
          .executeTakeFirst();
        if (Number(done.numUpdatedRows) !== 1) throw Errors.invalid('inviteToken: this invite has just been used');
        const member = await this.insertMember(trx, invite.account_id, invite.email, invite.role, hash);
        return this.sessions.open(trx, { accountId: member.account_id, memberId: member.id, keyId: null, scopes: null }, meta);
      })
      .catch(this.emailTaken(() => email));
    return { token: opened.token, session: await this.sessions.get(opened.token) };
  }

  /**
   * Emails a one-time reset link (valid 1 hour) when the email belongs to a member. Runs on its own:
   * the caller answers 202 at once, so the answer says nothing about whether the email is known.
   */
  async requestReset(email: unknown): Promise<void> {
    if (!this.opts.mailer) throw Errors.forbidden('password reset by email is off on this server (SMTP_URL is not set); ask the operator to reset it');
    const address = emailOf(email);
    void this.sendReset(address).catch((e: unknown) => this.log(`password reset mail to ${address} failed: ${(e as Error).message}`));
  }

  private async sendReset(email: string): Promise<void> {
    const row = await this.database.db.selectFrom('members').select(['id']).where('email', '=', email).executeTakeFirst();
    if (!row) return;
    const token = newToken();
    const now = this.clock.now();
    await this.database.tx((trx) =>
      trx
        .insertInto('password_resets')
        .values({ token_hash: hashToken(token), member_id: row.id, created_at: now, expires_at: now + RESET_TTL_MS, used_at: null })
        .execute(),
    );
    const url = `${this.opts.publicUrl}/reset-password#token=${token}`;
    await this.opts.mailer!.send({
      to: email,
      subject: 'Reset your GenGate password',
      text: `Someone asked to reset the password of ${email} on GenGate.\n\nOpen this link to choose a new one (valid 1 hour, once):\n${url}\n\nIf it was not you, ignore this email.\n`,
    });
  }

  /** Consumes a reset token once: sets the password and revokes every session of the member. */
  async resetPassword(token: unknown, password: unknown): Promise<{ member: MemberView; sessionsRevoked: number }> {
    if (typeof token !== 'string' || token === '') throw Errors.missingField('token', 'the token of the reset link');
    const hash = await hashPassword(checkPassword(password));
    const now = this.clock.now();
    return this.database.tx(async (trx) => {
      const used = await trx
        .updateTable('password_resets')
        .set({ used_at: now })
        .where('token_hash', '=', hashToken(token))
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning(['member_id', 'created_at'])
        .executeTakeFirst();
      const refused = Errors.invalid('token: this reset link is unknown, used or expired; ask for a new one');
      if (!used) throw refused;
      const row = await this.row(trx, used.member_id);
      // A link made before the password last changed (by another link, the CLI or the member) is spent (decision 2313).
      if (Number(used.created_at) < Number(row.password_changed_at)) throw refused;
      await this.passwordChanged(trx, row.id, hash, now);
      return { member: memberView(row), sessionsRevoked: await this.sessions.revokeAllOf(trx, row.id) };
    });
  }

  /**
   * A signed-in member changes their own password: the current one must be right (401 as at
   * sign-in); every other session of the member ends and every reset link is spent.
   */
  async changePassword(memberId: string, current: unknown, password: unknown, keepSession: string): Promise<{ sessionsRevoked: number }> {
    if (typeof current !== 'string' || current === '') throw Errors.missingField('currentPassword');
    const row = await this.row(this.database.db, memberId);
    if (!(await verifyPassword(current.slice(0, 1000), row.password_hash))) throw Errors.unauthenticated('currentPassword is wrong');
    const hash = await hashPassword(checkPassword(password));
    const now = this.clock.now();
    return this.database.tx(async (trx) => {
      await this.passwordChanged(trx, row.id, hash, now);
      return { sessionsRevoked: await this.sessions.revokeAllOf(trx, row.id, keepSession) };
    });
  }

  // --- helpers ---

  /** Sets a member's password inside the caller's transaction and spends every reset link of the member made until now. */
  private async passwordChanged(trx: Kysely<DB>, memberId: string, hash: string, now: number): Promise<void> {
    await trx.updateTable('members').set({ password_hash: hash, password_changed_at: now }).where('id', '=', memberId).execute();
    await trx.updateTable('password_resets').set({ used_at: now }).where('member_id', '=', memberId).where('used_at', 'is', null).execute();
  }

  /** Sends a mail on its own (failures are logged); false when there is no SMTP. */
  private mail(to: string, subject: string, text: string): boolean {
    if (!this.opts.mailer) return false;
    this.opts.mailer.send({ to, subject, text }).catch((e: unknown) => this.log(`mail to ${to} failed: ${(e as Error).message}`));
    return true;
  }

  private log(msg: string): void {
    (this.opts.log ?? ((m: string) => process.stderr.write(`gengate: ${m}\n`)))(msg);
  }

  private async insertMember(trx: Kysely<DB>, accountId: string, email: string, role: MemberRole, hash: string): Promise<MembersTable> {
    await this.emailFree(trx, email);
    const now = this.clock.now();
    const row: MembersTable = { id: randomId('mem_', 9), account_id: accountId, email, password_hash: hash, role, created_at: now, password_changed_at: now };
    await trx.insertInto('members').values(row).execute();
    return row;
  }

  private async emailFree(trx: Kysely<DB>, email: string): Promise<void> {
    const taken = await trx.selectFrom('members').select('id').where('email', '=', email).executeTakeFirst();
    if (taken) throw Errors.invalid(`email: ${email} is already a member of an account (an email belongs to one account)`);
  }

  private emailTaken(email: string | (() => string)) {
    return (e: unknown): never => {
      if (isUniqueViolation(e))
        throw Errors.invalid(`email: ${typeof email === 'string' ? email : email()} is already a member of an account (an email belongs to one account)`);
      throw e;
    };
  }

  /** An account keeps at least one owner: refuses to remove or demote its last. */
  private async keepAnOwner(trx: Kysely<DB>, row: MembersTable): Promise<void> {
    await this.database.lock(trx, `owners:${row.account_id}`);
    const others = await trx
      .selectFrom('members')
      .select('id')
      .where('account_id', '=', row.account_id)
      .where('role', '=', 'owner')
      .where('id', '!=', row.id)
      .executeTakeFirst();
    if (!others) throw Errors.invalid(`${row.email} is the last owner of account ${row.account_id}: make another member owner first`);
  }

  private async row(db: Kysely<DB>, idOrEmail: string, accountId?: string): Promise<MembersTable> {
    const key = idOrEmail.includes('@') ? idOrEmail.trim().toLowerCase() : idOrEmail;
    let q = db
      .selectFrom('members')
      .selectAll()
      .where(idOrEmail.includes('@') ? 'email' : 'id', '=', key);
    if (accountId !== undefined) q = q.where('account_id', '=', accountId);
    const row = await q.executeTakeFirst();
    if (!row) throw Errors.notFound(`no member ${JSON.stringify(idOrEmail)}${accountId ? ' in this account' : ''}`);
    return row;
  }
}
