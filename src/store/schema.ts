import type { Generated } from 'kysely';

/** Table types shared by both dialects. Times are epoch milliseconds, money is micro-USD. */

/**
 * The shape in which a task reports its result (DECISIONS §18, decision 0402): `gengate` the SPEC
 * shape, `kie` kie.ai's (resultJson always a JSON string). Set on an account by the operator, fixed
 * on a task when it is created. Not to be confused with the SQL dialect of the database.
 */
export type ApiDialect = 'gengate' | 'kie';
export interface AccountsTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  webhook_secret: string;
  balance_micros: number;
  created_at: number;
  rate_write_limit: number | null;
  rate_read_limit: number | null;
  /** The dialect of the tasks the account creates from now on (migration 008); 'gengate' unless the operator sets 'kie'. */
  dialect: Generated<ApiDialect>;
  /** The low-balance level in micro-USD (migration 015); null: no alert. */
  alert_level_micros: Generated<number | null>;
  /** Where the `balance.low` webhook goes; null: no webhook. */
  alert_url: Generated<string | null>;
  /** 1: email the account's owners too (with SMTP). */
  alert_email: Generated<number>;
  /** 1 while the balance is at or above the level: the next fall below it fires the alert and clears this (decision 1905). */
  alert_armed: Generated<number>;
  /** The webhook secret before the last rotation (sealed); it still signs until `webhook_secret_previous_until`. */
  webhook_secret_previous: Generated<string | null>;
  webhook_secret_previous_until: Generated<number | null>;
  /**
   * 1 when the charges and refunds of the account's keys move their `key_spend` counters (migration
   * 018): set, with the counters filled from the ledger, when a key of the account gets a budget or
   * its keys' spend is shown; never cleared (decision 1902).
   */
  key_spend_kept: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  hash: string;
  prefix: string;
  scopes: string | null;
  models: string | null;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  /** Shown to people; not unique. */
  name: string;
  /** After this time (epoch ms) the key answers 401. */
  expires_at: number | null;
  /** The key's spend limit in micro-USD per `budget_period`; null: no limit beyond the balance. */
  budget_micros: number | null;
  budget_period: KeyBudgetPeriod | null;
  /** Who made the key: a member id (`mem_...`), a key id (`key_...`), or null for the operator (decision 1907). */
  created_by: string | null;
}

/** The period a key's budget counts over; days and months are UTC (decision 1902). */
export type KeyBudgetPeriod = 'total' | 'day' | 'month';

export type LedgerKind = 'topup' | 'charge' | 'refund' | 'partial_refund' | 'adjustment';

export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  kind: LedgerKind;
  amount_micros: number;
  balance_after_micros: number;
  task_id: string | null;
  reason: string;
  created_at: number;
  /** The key that made a task's charge, on the charge and its refunds; null on other entries. */
  key_id: Generated<string | null>;
  /** Where the money came from or went when the kind does not say (migration 014): a card top-up, a Stripe refund or dispute; null otherwise. */
  source: Generated<LedgerSource | null>;
  /** The model of a task's charge, on the charge and its refunds (migration 014); null on other entries. */
  model: Generated<string | null>;
}

/** `card`: the credit of a card top-up; `stripe_refund` / `stripe_dispute`: the debit of a Stripe refund or dispute (decision 1906); `stripe_dispute_won`: the credit back of a won dispute (decision 1904, amended). */
export type LedgerSource = 'card' | 'stripe_refund' | 'stripe_dispute' | 'stripe_dispute_won';

/** What a key spent (charges less their refunds) in one period: the total (starts_at 0), a UTC day or a UTC month. */
export interface KeySpendTable {
  key_id: string;
  period: KeyBudgetPeriod;
  /** Epoch ms of the period's start. */
  starts_at: number;
  spent_micros: number;
}

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: number;
}

export type TaskState = 'waiting' | 'queuing' | 'generating' | 'success' | 'fail';

/** A task: what was asked, what was charged, where the engine is with it. Booleans are 0/1. */
export interface TasksTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  model: string;
  state: TaskState;
  param: string;
  input: string;
  media: string | null;
  callback_url: string | null;
  price_micros: number;
  final_micros: number;
  auto_length: number;
  is_draft: number;
  progress: number;
  result: string | null;
  real_seconds: number | null;
  fail_code: number | null;
  fail_type: string | null;
  fail_msg: string | null;
  refunded: number;
  files_expired: number;
  files_expire_at: number | null;
  backend: string;
  backend_ref: string | null;
  run_at: number;
  deadline_at: number;
  locked_until: number | null;
  locked_by: string | null;
  attempts: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** Position in the model's routes the task is on (issue 8 fail-over). */
  route_index: Generated<number>;
  /** The stored definition version the task was created with; null: the definition file's (migration 023). */
  model_version?: number | null;
  /** Token of the task's upstream callback URL (/upstream/v1/notify/<token>); null until handed to an upstream. */
  upstream_token: string | null;
  /** When the task was handed to its backend. */
  handed_at: number | null;
  /** The dialect of the task's views, fixed at creation (migration 008; src/tasks/view.ts decides the shape). */
  dialect: Generated<ApiDialect>;
  /** The API the task was created through when it answers in that API's shapes: null (jobs API) or `suno` (kie.ai's POST /api/v1/generate). */
  origin: string | null;
  /** The W3C traceparent of the creating request while tracing was on (migration 021, decision 2603); null otherwise. */
  trace_parent: Generated<string | null>;
}

export interface TaskEventsTable {
  id: Generated<number>;
  task_id: string;
  from_state: TaskState | null;
  to_state: TaskState;
  detail: string;
  at: number;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  body_hash: string;
  task_id: string;
  created_at: number;
}

/** A stored file: a task result or (issue 5) an upload, with the media facts pricing needs. */
export interface FilesTable {
  id: string;
  account_id: string;
  task_id: string | null;
  purpose: 'result' | 'upload';
  name: string;
  mime: string;
  bytes: number;
  blob_key: string;
  kind: 'image' | 'video' | 'audio' | null;
  format: string | null;
  seconds: number | null;
  created_at: number;
  expires_at: number;
  deleted_at: number | null;
}

export interface CallbacksTable {
  task_id: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  due_at: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
  locked_until: number | null;
  locked_by: string | null;
}

/** An account event to deliver (the `balance.low` alert): one row per channel, claimed with a lease like `callbacks`. */
export interface AccountEventsTable {
  id: string;
  account_id: string;
  type: string;
  channel: 'webhook' | 'email';
  url: string | null;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  due_at: number;
  locked_until: number | null;
  locked_by: string | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
}

/** What a delivery attempt is: a task callback's first try or retry, a redelivery asked for, an account event, a test. */
export type AttemptKind = 'delivery' | 'retry' | 'redeliver' | 'event' | 'test';

/** One delivery attempt (the delivery log). */
export interface WebhookAttemptsTable {
  id: string;
  account_id: string;
  task_id: string | null;
  event_id: string | null;
  kind: AttemptKind;
  url: string;
  webhook_id: string;
  at: number;
  ok: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** The operator's switch on a model (CLI / admin API); overrides the catalog's `enabled`. */
/** One change of a model definition (migration 023): who, when, what; `body` is the definition's JSON, null for a file's. */
export interface ModelDefinitionVersionsTable {
  id: Generated<number>;
  model_id: string;
  version: number;
  action: 'create' | 'edit' | 'retire' | 'restore';
  body: string | null;
  who: string;
  note: string | null;
  created_at: number;
}

/** The definition version in force per model (migration 023); `body` null: the definition file's. */
export interface ModelDefinitionsTable {
  model_id: string;
  version: number;
  retired: number;
  body: string | null;
  updated_at: number;
}

export interface ModelSwitchesTable {
  model_id: string;
  enabled: number;
  updated_at: number;
}

export type MemberRole = 'owner' | 'member' | 'operator';

/** A person who signs in to an account (decision 1903). Emails are stored lower-cased. */
export interface MembersTable {
  id: string;
  account_id: string;
  email: string;
  /** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with each hash so they can be raised later. */
  password_hash: string;
  role: MemberRole;
  created_at: number;
  password_changed_at: number;
}

/** A browser session: the cookie's token is kept only as its SHA-256 hash. */
export interface MemberSessionsTable {
  id: string;
  token_hash: string;
  account_id: string;
  /** The member signed in; null for a session opened with an API key. */
  member_id: string | null;
  /** The API key that opened the session (null for a member's). */
  key_id: string | null;
  /** JSON list of scopes; null means every scope. */
  scopes: string | null;
  csrf: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  address: string | null;
  user_agent: string | null;
}

export interface MemberInvitesTable {
  id: string;
  token_hash: string;
  account_id: string;
  email: string;
  role: 'owner' | 'member';
  invited_by: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
}

export interface PasswordResetsTable {
  token_hash: string;
  member_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export type TopupStatus = 'pending' | 'paid' | 'expired';

/** A card top-up: one Stripe Checkout Session (decision 1904). */
export interface TopupsTable {
  id: string;
  account_id: string;
  amount_micros: number;
  status: TopupStatus;
  session_id: string | null;
  payment_intent: string | null;
  paid_micros: number;
  created_at: number;
  paid_at: number | null;
  /** Stripe's fee and net of the charge's balance transaction (micro-USD), null until known (migration 020). */
  fee_micros: number | null;
  net_micros: number | null;
  /** Why the fee is not known yet: not available yet, another currency, Stripe's error. */
  fee_note: string | null;
  fee_attempts: number;
  /** When the fee is next fetched; null with attempts above 0: nothing more to try (known, another currency, or given up). */
  fee_due_at: number | null;
}

/** A Stripe refund or dispute of a top-up, or a won dispute (`dispute_won`: negative debited and unpaid, giving back the dispute's); `topup_id` null and `applied` 0 until the top-up is credited. */
export interface TopupReversalsTable {
  id: string;
  payment_intent: string;
  topup_id: string | null;
  kind: 'refund' | 'dispute' | 'dispute_won';
  amount_micros: number;
  debited_micros: number;
  unpaid_micros: number;
  applied: number;
  event_id: string;
  created_at: number;
  applied_at: number | null;
}

/** An OAuth client registered through /oauth/register (RFC 7591; decision 2202). Public clients: no secret. */
export interface OAuthClientsTable {
  id: string;
  name: string;
  /** JSON list of the exact redirect URIs the client registered. */
  redirect_uris: string;
  created_at: number;
}

/** What a member allowed a client: the API key made for the grant carries its scopes; revoking the grant revokes the key. */
export interface OAuthGrantsTable {
  id: string;
  client_id: string;
  account_id: string;
  member_id: string;
  key_id: string;
  /** JSON list of scopes. */
  scopes: string;
  /** The resource (RFC 8707) the tokens are for: the MCP endpoint. */
  resource: string;
  created_at: number;
  revoked_at: number | null;
}

export type OAuthTokenKind = 'code' | 'access' | 'refresh';

/** An authorization code, access token or refresh token of a grant, kept only as its SHA-256 hash. */
export interface OAuthTokensTable {
  hash: string;
  grant_id: string;
  kind: OAuthTokenKind;
  created_at: number;
  expires_at: number;
  /** A code or refresh token is used once; a second use revokes the grant's tokens. */
  used_at: number | null;
  revoked_at: number | null;
  /** Codes only: the redirect URI and PKCE S256 challenge of the authorization request. */
  redirect_uri: string | null;
  code_challenge: string | null;
}

export interface DB {
  members: MembersTable;
  member_sessions: MemberSessionsTable;
  member_invites: MemberInvitesTable;
  password_resets: PasswordResetsTable;
  topups: TopupsTable;
  topup_reversals: TopupReversalsTable;
  tasks: TasksTable;
  task_events: TaskEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  files: FilesTable;
  callbacks: CallbacksTable;
  account_events: AccountEventsTable;
  webhook_attempts: WebhookAttemptsTable;
  model_switches: ModelSwitchesTable;
  model_definitions: ModelDefinitionsTable;
  model_definition_versions: ModelDefinitionVersionsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerTable;
  key_spend: KeySpendTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
  gengate_migrations: MigrationsTable;
}
