import type { Generated } from 'kysely';

/** Table types shared by both dialects. Times are epoch milliseconds, money is micro-USD. */
export interface AccountsTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  webhook_secret: string;
  balance_micros: number;
  created_at: number;
  rate_write_limit: number | null;
  rate_read_limit: number | null;
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
}

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
  /** Token of the task's upstream callback URL (/upstream/v1/notify/<token>); null until handed to an upstream. */
  upstream_token: string | null;
  /** When the task was handed to its backend. */
  handed_at: number | null;
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

/** The operator's switch on a model (CLI / admin API); overrides the catalog's `enabled`. */
export interface ModelSwitchesTable {
  model_id: string;
  enabled: number;
  updated_at: number;
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
}

/** A Stripe refund or dispute of a top-up; `topup_id` null and `applied` 0 until the top-up is credited. */
export interface TopupReversalsTable {
  id: string;
  payment_intent: string;
  topup_id: string | null;
  kind: 'refund' | 'dispute';
  amount_micros: number;
  debited_micros: number;
  unpaid_micros: number;
  applied: number;
  event_id: string;
  created_at: number;
  applied_at: number | null;
}

export interface DB {
  topups: TopupsTable;
  topup_reversals: TopupReversalsTable;
  tasks: TasksTable;
  task_events: TaskEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  files: FilesTable;
  callbacks: CallbacksTable;
  model_switches: ModelSwitchesTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerTable;
  gengate_migrations: MigrationsTable;
}
