import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../store/index.js';
import type { AccountsTable, ApiDialect, DB } from '../store/index.js';
import type { Ledger, LedgerEntry } from '../billing/index.js';
import type { Clock } from '../clock.js';
import { Errors, shown } from '../errors.js';
import { boundByRole } from './roles.js';
import { endGrantsOf } from './grants.js';
import { formatUsd } from '../billing/index.js';
import { randomId } from '../ids.js';
import { budgetOf, insertKey, keyView, SCOPES, type KeyView, type Scope } from './keys.js';
import { BUDGET_PERIODS, describeBudget, type KeyBudget } from './budgets.js';
import type { ApiKeysTable, KeyBudgetPeriod } from '../store/index.js';
import { readByKey } from '../store/index.js';
import type { SecretBox } from '../secrets/index.js';
import {
  boundNewKey,
  checkCustody,
  checkExpiryBound,
  checkMakerBudget,
  keyLineage,
  makerId,
  OPERATOR,
  revokeKeyIn,
  type KeyActor,
  type MakerBounds,
} from './custody.js';

/** What createKey is given besides the account (each optional; see createKey). */
export interface NewKey {
  name?: string;
  scopes?: string[];
  models?: string[];
  expiresAt?: number | null;
  budget?: KeyBudget | null;
}

/** The dialects an account may be set to (DECISIONS §18, decision 0402): the SPEC shapes, or kie.ai's. */
export const API_DIALECTS = ['gengate', 'kie'] as const satisfies readonly ApiDialect[];

/** How long a rotated-out webhook secret keeps signing deliveries next to the new one (decision 1905). */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600_000;

/** An account's webhook secrets: the current one and the previous one while it still signs. */
export interface WebhookSecrets {
  secret: string;
  previous: { secret: string; validUntil: string } | null;
}

/** What an operator sees of an account. */
export interface AccountView {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  balance: string;
  balanceMicros: number;
  createdAt: string;
  /** Per-key rate limits of this account's keys per window; null means the configured default. */
  limits: { write: number | null; read: number | null };
  /** The dialect of the tasks the account creates: `kie` makes their resultJson a JSON string for every model. */
  dialect: ApiDialect;
  /** Only in `create` and `show`: the secret that signs this account's callbacks. */
  webhookSecret?: string;
}

export function accountView(row: Selectable<AccountsTable>): AccountView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    balance: formatUsd(Number(row.balance_micros), 4),
    balanceMicros: Number(row.balance_micros),
    createdAt: new Date(Number(row.created_at)).toISOString(),
    limits: { write: row.rate_write_limit ?? null, read: row.rate_read_limit ?? null },
    dialect: row.dialect,
  };
}

/** Checks operator-supplied scopes; throws a client error naming the bad one. */
export function checkScopes(scopes: string[]): Scope[] {
  for (const s of scopes) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw Errors.invalid(`scopes: unknown scope ${JSON.stringify(s)}; allowed: ${SCOPES.join(', ')}`);
    }
  }
  return scopes as Scope[];
}

/** Operator operations on accounts and keys; the CLI and the admin API both call these. */
export class Accounts {
  private readonly readBalance;

  constructor(
    private readonly database: Database,
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    /** Seals webhook secrets in the database and opens them for the operator and for signing. */
    private readonly secrets: SecretBox,
    /** Told after a change that alters what a key may do (revocation, account status, limits), so cached keys are dropped. */
    private readonly accessChanged: () => void = () => {},
    /** True when the catalog knows a model id or alias (disabled models included): a key's allowlist names only those. */
    private readonly isModel: (name: string) => boolean = () => true,
  ) {
    const { db } = database;
    // Balance polls are answered from kept results while nothing has been committed (SQLite).
    this.readBalance = readByKey(
      database,
      'id',
      () => db.selectFrom('accounts').select(['id', 'balance_micros']),
      (r) => r.id,
    );
  }

  /** The committed balance in micro-USD (0 for an unknown account); the hot path of GET /user/balance. */
  /** Drops the keys this process remembers (after a change made elsewhere that alters what keys may do). */
  forgetKeys(): void {
    this.accessChanged();
  }

  async balanceMicros(accountId: string): Promise<number> {
    const [row] = await this.readBalance(accountId);
    return row ? Number(row.balance_micros) : 0;
  }

  /** Creates an account with an optional opening balance and a first key (its secret is returned once). */
  async create(name: string, balanceMicros = 0): Promise<{ account: AccountView; apiKey: string; key: KeyView }> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 200) throw Errors.invalid(`name must be 1 to 200 characters (got ${JSON.stringify(name)})`);
    return this.database.tx(async (trx) => this.createIn(trx, trimmed, balanceMicros));
  }

  /** The body of create, for callers that already hold a transaction (first run). */
  async createIn(trx: Kysely<DB>, name: string, balanceMicros: number) {
    const now = this.clock.now();
    const id = randomId('acc_', 9);
    const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
    await trx
      .insertInto('accounts')
      .values({ id, name, status: 'active', webhook_secret: this.secrets.seal(webhookSecret), balance_micros: 0, created_at: now })
      .execute();
    if (balanceMicros > 0) await this.ledger.credit(trx, id, balanceMicros, 'topup', 'opening balance');
    const { row, secret } = await insertKey(trx, id, { name: 'key 1' }, now);
    const account = await trx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return { account: { ...accountView(account), webhookSecret }, apiKey: secret, key: keyView(row) };
  }

  async list(): Promise<AccountView[]> {
    const rows = await this.database.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(accountView);
  }

  /** One account as its members and keys see it: without the webhook signing secret. */
  async view(id: string): Promise<AccountView> {
    return accountView(await this.row(this.database.db, id));
  }

  /** One account, with its webhook signing secret. */
  async get(id: string): Promise<AccountView> {
    const row = await this.row(this.database.db, id);
    return { ...accountView(row), webhookSecret: this.secrets.open(row.webhook_secret) };
  }

  /** The account's webhook signing secret (for callbacks and for the operator). */
  async webhookSecret(id: string): Promise<string> {
    return this.secrets.open((await this.row(this.database.db, id)).webhook_secret);
  }

  /** The account's webhook secrets: the current one and, for 24 h after a rotation, the previous one (both sign deliveries; decision 1905). */
  async webhookSecrets(id: string): Promise<WebhookSecrets> {
    return this.secretsOf(await this.row(this.database.db, id));
  }

  /**
   * Makes a new webhook secret. The one it replaces keeps signing (second `webhook-signature`) for
   * WEBHOOK_SECRET_OVERLAP_MS; a secret replaced earlier than that stops at once.
   */
  async rotateWebhookSecret(id: string): Promise<WebhookSecrets> {
    const now = this.clock.now();
    const next = `whsec_${randomBytes(24).toString('base64')}`;
    const row = await this.database.tx(async (trx) => {
      const current = await this.row(trx, id);
      return trx
        .updateTable('accounts')
        .set({
          webhook_secret: this.secrets.seal(next),
          webhook_secret_previous: current.webhook_secret,
          webhook_secret_previous_until: now + WEBHOOK_SECRET_OVERLAP_MS,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return this.secretsOf(row);
  }

  private secretsOf(row: Selectable<AccountsTable>): WebhookSecrets {
    const until = row.webhook_secret_previous_until === null ? null : Number(row.webhook_secret_previous_until);
    const live = row.webhook_secret_previous !== null && until !== null && until > this.clock.now();
    return {
      secret: this.secrets.open(row.webhook_secret),
      previous: live ? { secret: this.secrets.open(row.webhook_secret_previous!), validUntil: new Date(until).toISOString() } : null,
    };
  }

  /** How many webhook secrets are sealed with each key id (`unsealed` for none). */
  async sealedSecrets(): Promise<Record<string, number>> {
    const rows = await this.database.db.selectFrom('accounts').select('webhook_secret').execute();
    const counts: Record<string, number> = {};
    for (const r of rows) {
      const id = /^sealed:v1:([0-9a-f]+):/.exec(r.webhook_secret)?.[1] ?? 'unsealed';
      counts[id] = (counts[id] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * Seals every webhook secret stored unsealed (before sealing existed) or under an older key, with
   * the current key; each row is compare-and-set, so processes doing this at once do no harm.
   * Returns how many were sealed.
   */
  async sealStoredSecrets(): Promise<number> {
    const rows = await this.database.db.selectFrom('accounts').select(['id', 'webhook_secret']).execute();
    let sealed = 0;
    for (const r of rows.filter((x) => this.secrets.stale(x.webhook_secret))) {
      const next = this.secrets.seal(this.secrets.open(r.webhook_secret));
      const done = await this.database.tx((trx) =>
        trx.updateTable('accounts').set({ webhook_secret: next }).where('id', '=', r.id).where('webhook_secret', '=', r.webhook_secret).executeTakeFirst(),
      );
      if (Number(done.numUpdatedRows) > 0) sealed++;
    }
    return sealed;
  }

  async setStatus(id: string, status: 'active' | 'disabled'): Promise<AccountView> {
    return this.database
      .tx(async (trx) => {
        await this.row(trx, id);
        await trx.updateTable('accounts').set({ status }).where('id', '=', id).execute();
        // A disabled account's OAuth clients lose their grants for good: enabling it again revives none (decision 2315).
        if (status === 'disabled') await endGrantsOf(trx, { accountId: id }, this.clock.now());
        return accountView(await this.row(trx, id));
      })
      .finally(this.accessChanged);
  }

  /** Sets the account's own per-key rate limits; null restores the configured default. */
  async setLimits(id: string, limits: { write?: number | null; read?: number | null }): Promise<AccountView> {
    for (const [name, v] of Object.entries(limits)) {
      if (v !== null && v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= 1_000_000_000)) {
        throw Errors.invalid(`${name} must be a whole number of requests from 1 to 1000000000, or null for the default (got ${JSON.stringify(v)})`);
      }
    }
    return this.database
      .tx(async (trx) => {
        await this.row(trx, id);
        const set: { rate_write_limit?: number | null; rate_read_limit?: number | null } = {};
        if (limits.write !== undefined) set.rate_write_limit = limits.write;
        if (limits.read !== undefined) set.rate_read_limit = limits.read;
        if (Object.keys(set).length) await trx.updateTable('accounts').set(set).where('id', '=', id).execute();
        return accountView(await this.row(trx, id));
      })
      .finally(this.accessChanged);
  }

  /**
   * Sets the dialect of the tasks the account creates from now on (decision 0402); tasks it already
   * has keep theirs. Keys remembered by other processes see it within AUTH_CACHE_MS.
   */
  async setDialect(id: string, dialect: unknown): Promise<AccountView> {
    if (!(API_DIALECTS as readonly unknown[]).includes(dialect)) {
      throw Errors.invalid(`dialect must be one of ${API_DIALECTS.map((d) => JSON.stringify(d)).join(', ')} (got ${shown(dialect)})`);
    }
    return this.database
      .tx(async (trx) => {
        await this.row(trx, id);
        await trx
          .updateTable('accounts')
          .set({ dialect: dialect as ApiDialect })
          .where('id', '=', id)
          .execute();
        return accountView(await this.row(trx, id));
      })
      .finally(this.accessChanged);
  }

  /** Adds `amountMicros` to the balance as a top-up entry. */
  async topup(id: string, amountMicros: number, note: string): Promise<AccountView> {
    if (!(amountMicros > 0)) throw Errors.invalid(`amount must be a positive USD amount (got ${amountMicros / 1e6})`);
    return this.database.tx(async (trx) => {
      await this.row(trx, id);
      await this.ledger.credit(trx, id, amountMicros, 'topup', note || 'top-up');
      return accountView(await this.row(trx, id));
    });
  }

  /**
   * Creates a key. `name` defaults to "key N" (N: the account's keys so far, plus one); `expiresAt`
   * must be in the future; `budget` limits what the key may spend per period (decision 1902).
   * `by` is who makes it (decision 1907): a key that makes a key gives it no more than it has.
   */
  async createKey(accountId: string, opts: NewKey, by: KeyActor = OPERATOR): Promise<{ key: KeyView; apiKey: string }> {
    return this.database.tx((trx) => this.createKeyIn(trx, accountId, opts, by));
  }

  /** createKey inside the caller's transaction (an OAuth consent makes its key, grant and code together). */
  async createKeyIn(trx: Kysely<DB>, accountId: string, opts: NewKey, by: KeyActor = OPERATOR): Promise<{ key: KeyView; apiKey: string }> {
    const scopes = checkScopes(opts.scopes ?? []);
    const models = (opts.models ?? []).map((m) => m.trim()).filter(Boolean);
    // A misspelt name would make a key that can use nothing it was meant for, found out only at createTask.
    const unknown = models.find((m) => !this.isModel(m));
    if (unknown !== undefined) throw Errors.invalid(`models: unknown model ${JSON.stringify(unknown)}; see GET /api/v1/models for the ids`);
    const name = opts.name === undefined ? undefined : checkKeyName(opts.name);
    const now = this.clock.now();
    if (opts.expiresAt != null) checkExpiry(opts.expiresAt, now);
    if (opts.budget) checkBudget(opts.budget);
    if (by.kind !== 'operator' && by.accountId !== accountId) throw Errors.notFound(`no account ${JSON.stringify(accountId)}`);
    await this.row(trx, accountId);
    let given = { scopes, models, expiresAt: opts.expiresAt ?? null };
    if (by.kind === 'key') given = boundNewKey(await this.makerBounds(trx, by.keyId), { scopes, models, expiresAt: opts.expiresAt });
    if (by.kind === 'member') given.scopes = boundByRole(by.role, given.scopes);
    const count = await trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    const { row, secret } = await insertKey(
      trx,
      accountId,
      { name: name ?? `key ${Number(count?.n ?? 0) + 1}`, ...given, budget: opts.budget ?? null, createdBy: makerId(by) },
      now,
    );
    // A budget is checked against the spend counters: the account keeps them from now on (decision 1902).
    if (opts.budget) await this.ledger.keepKeySpend(trx, accountId);
    return { key: keyView(row), apiKey: secret };
  }

  /**
   * Changes a key's name, expiry or budget; `null` removes an expiry or a budget. A budget given
   * with only one of amount and period keeps the other from the key's current budget. Answers
   * the key with its spend in the current period. `by` must be allowed to manage the key (decision 1907).
   */
  async updateKey(
    keyId: string,
    changes: { name?: string; expiresAt?: number | null; budget?: { micros?: number; period?: KeyBudgetPeriod } | null },
    by: KeyActor = OPERATOR,
  ): Promise<KeyView> {
    const name = changes.name === undefined ? undefined : checkKeyName(changes.name);
    const now = this.clock.now();
    if (changes.expiresAt != null) checkExpiry(changes.expiresAt, now);
    return this.database
      .tx(async (trx) => {
        const row = await this.managedKey(trx, keyId, by);
        if (by.kind === 'key') {
          const maker = await this.makerBounds(trx, by.keyId);
          checkMakerBudget(maker);
          if (changes.expiresAt !== undefined) checkExpiryBound(maker, changes.expiresAt);
        }
        const set: Partial<Pick<ApiKeysTable, 'name' | 'expires_at' | 'budget_micros' | 'budget_period'>> = {};
        if (name !== undefined) set.name = name;
        if (changes.expiresAt !== undefined) set.expires_at = changes.expiresAt;
        if (changes.budget === null) Object.assign(set, { budget_micros: null, budget_period: null });
        else if (changes.budget !== undefined) {
          const micros = changes.budget.micros ?? (row.budget_micros == null ? undefined : Number(row.budget_micros));
          if (micros === undefined) throw Errors.invalid(`budget.amount is required: key ${keyId} has no budget yet (got only a period)`);
          const budget = { micros, period: changes.budget.period ?? row.budget_period ?? 'total' };
          checkBudget(budget);
          Object.assign(set, { budget_micros: budget.micros, budget_period: budget.period });
        }
        if (Object.keys(set).length) await trx.updateTable('api_keys').set(set).where('id', '=', keyId).execute();
        // The answer shows the key's spend, and a budget is checked against it: the account keeps its keys' spend from now on.
        await this.ledger.keepKeySpend(trx, row.account_id);
        return this.withSpend(trx, await this.keyRow(trx, keyId), now);
      })
      .finally(this.accessChanged);
  }

  /**
   * An account's keys with what each spent in its budget's current period (in total without a
   * budget) and what is left. The first list of an account that does not keep its keys' spend yet
   * makes it keep them (filled from the ledger once; decision 1902).
   */
  async listKeys(accountId: string): Promise<KeyView[]> {
    const { db } = this.database;
    const account = await this.row(db, accountId);
    if (Number(account.key_spend_kept) !== 1) await this.database.tx((trx) => this.ledger.keepKeySpend(trx, accountId));
    const rows = await db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    const now = this.clock.now();
    return Promise.all(rows.map((r) => this.withSpend(db, r, now)));
  }

  /** The key's view with its spend. */
  private async withSpend(db: Kysely<DB>, row: ApiKeysTable, now: number): Promise<KeyView> {
    const budget = budgetOf(row);
    const spent = await this.ledger.keySpend(db, row.id, budget?.period ?? 'total', now);
    const remaining = budget ? formatUsd(Math.max(0, budget.micros - spent), 4) : null;
    return { ...keyView(row), spent: formatUsd(spent, 4), spentMicros: spent, remaining };
  }

  /**
   * An operator adjustment (DECISIONS §22): a credit (`amountMicros` > 0) or a debit (< 0) with a
   * reason, as a ledger entry of kind `adjustment`. A debit larger than the balance is refused
   * with 409 and changes nothing: the balance never goes below zero.
   */
  async adjust(id: string, amountMicros: number, reason: string): Promise<AccountView> {
    const why = reason.trim();
    if (!why || why.length > 500) throw Errors.invalid(`reason must be 1 to 500 characters saying why (got ${JSON.stringify(reason)})`);
    if (!Number.isSafeInteger(amountMicros) || amountMicros === 0) {
      throw Errors.invalid(`amount must be a non-zero USD amount: positive to credit, negative to debit (got ${formatUsd(amountMicros, 6)})`);
    }
    return this.database.tx(async (trx) => {
      await this.row(trx, id);
      if (amountMicros > 0) await this.ledger.credit(trx, id, amountMicros, 'adjustment', why);
      else {
        const taken = await this.ledger.debitAdjustment(trx, id, -amountMicros, why);
        if (!taken.ok) {
          throw Errors.conflict(
            `amount -${formatUsd(taken.required, 4)} USD would take the balance ${formatUsd(taken.balance, 4)} USD of account ${id} below zero; ` +
              `debit at most ${formatUsd(taken.balance, 4)} USD`,
            { balance: formatUsd(taken.balance, 4), required: formatUsd(taken.required, 4), currency: 'USD' },
          );
        }
      }
      return accountView(await this.row(trx, id));
    });
  }

  /**
   * Revokes a key at once, and with it every key it made (directly or through keys it made), so a
   * key made by a key never outlives it (decision 1907); revoking twice keeps the first time.
   */
  async revokeKey(keyId: string, by: KeyActor = OPERATOR): Promise<KeyView> {
    return this.database
      .tx(async (trx) => {
        await revokeKeyIn(trx, await this.managedKey(trx, keyId, by), this.clock.now());
        return keyView(await trx.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow());
      })
      .finally(this.accessChanged);
  }

  async ledgerEntries(accountId: string): Promise<LedgerEntry[]> {
    await this.row(this.database.db, accountId);
    return this.ledger.entries(this.database.db, accountId);
  }

  /** The key, if `by` may manage it: 404 for an unknown key or another account's, 403 for one it may not (decision 1907). */
  private async managedKey(trx: Kysely<DB>, keyId: string, by: KeyActor): Promise<ApiKeysTable> {
    const row = await this.keyRow(trx, keyId);
    if (by.kind !== 'operator') checkCustody(by, row, await keyLineage(trx, row.account_id));
    return row;
  }

  /** What the acting key has, which bounds the keys it makes. */
  private async makerBounds(trx: Kysely<DB>, keyId: string): Promise<MakerBounds> {
    const row = await this.keyRow(trx, keyId);
    const view = keyView(row);
    return {
      keyId,
      scopes: view.scopes,
      models: view.models,
      expiresAt: row.expires_at == null ? null : Number(row.expires_at),
      hasBudget: view.budget !== null,
    };
  }

  private async keyRow(db: Kysely<DB>, keyId: string): Promise<ApiKeysTable> {
    const row = await db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
    if (!row) throw Errors.notFound(`no API key ${JSON.stringify(keyId)}`);
    return row;
  }

  private async row(db: Kysely<DB>, id: string): Promise<Selectable<AccountsTable>> {
    const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw Errors.notFound(`no account ${JSON.stringify(id)}`);
    return row;
  }
}

/** A key's name: 1 to 100 characters after trimming. */
function checkKeyName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 100) throw Errors.invalid(`name must be 1 to 100 characters (got ${JSON.stringify(name)})`);
  return trimmed;
}

function checkExpiry(at: number, now: number): void {
  if (!Number.isFinite(at) || at <= now) {
    const shownAt = Number.isFinite(at) ? new Date(at).toISOString() : String(at);
    throw Errors.invalid(`expiresAt must be a time in the future, such as ${new Date(now + 30 * 86_400_000).toISOString()} (got ${shownAt})`);
  }
}

function checkBudget(b: KeyBudget): void {
  if (!BUDGET_PERIODS.includes(b.period)) {
    throw Errors.invalid(`budget.period must be one of ${BUDGET_PERIODS.join(', ')} (got ${JSON.stringify(b.period)})`);
  }
  if (!Number.isSafeInteger(b.micros) || b.micros < 0) throw Errors.invalid(`budget.amount must be a USD amount of 0 or more (got ${describeBudget(b)})`);
}
