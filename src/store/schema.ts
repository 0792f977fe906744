import type { Generated } from 'kysely';

/** Table types shared by both dialects. Times are epoch milliseconds, money is micro-USD. */
export interface AccountsTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  webhook_secret: string;
  balance_micros: number;
  created_at: number;
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

export interface DB {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerTable;
  gengate_migrations: MigrationsTable;
}
