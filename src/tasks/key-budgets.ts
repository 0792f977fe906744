import type { Kysely } from 'kysely';
import { budgetOf, describeBudget, keysMadeBy, type KeyBudget, type Principal } from '../accounts/index.js';
import { formatUsd, type Ledger } from '../billing/index.js';
import { Errors } from '../errors.js';
import type { Database, DB } from '../store/index.js';

/** What the budget check needs of createTask's dependencies. */
export interface BudgetDeps {
  database: Database;
  ledger: Ledger;
  topUpUrl: string;
}

interface ChainKey {
  id: string;
  createdBy: string | null;
  budget: KeyBudget | null;
}

/** The key and the keys that made it, leaf first, as the database has them now (the budgets included). */
async function chainOf(db: Kysely<DB>, keyId: string): Promise<ChainKey[]> {
  const chain: ChainKey[] = [];
  for (let id: string | null = keyId; id !== null && id.startsWith('key_') && !chain.some((k) => k.id === id);) {
    const row = await db.selectFrom('api_keys').select(['id', 'created_by', 'budget_micros', 'budget_period']).where('id', '=', id).executeTakeFirst();
    if (!row) break;
    chain.push({ id: row.id, createdBy: row.created_by ?? null, budget: budgetOf(row) });
    id = row.created_by ?? null;
  }
  return chain;
}

/**
 * The 402 for a key whose budget, or the budget of a key that made it (directly or through other
 * keys), does not cover the price (DECISIONS §22, decision 2316). A key's budget counts the spend
 * of the key and of every key it made, whenever they were made, so a key made before its maker got
 * a budget is bounded by it too. The budgets are read from the database inside the create
 * transaction, after the locks that serialise the creates of each budgeted key in every process
 * (taken from the root of the chain down, so two chains never wait on each other in a circle), so a
 * budget lowered by another process holds from its commit on. A member's session has no key: no budget.
 * Without `trx` (an early refusal before the content check) nothing is locked; the transaction checks again.
 */
export async function checkKeyBudgets(deps: BudgetDeps, db: Kysely<DB>, principal: Principal, price: number, now: number, trx?: Kysely<DB>): Promise<void> {
  let chain = await chainOf(db, principal.keyId);
  if (!chain.some((k) => k.budget)) return;
  if (trx) {
    for (const k of [...chain].reverse()) if (k.budget) await deps.database.lock(trx, `key-budget:${k.id}`);
    chain = await chainOf(trx, principal.keyId);
  }
  const lineage = await keyLineage(db, principal.accountId);
  for (const k of chain) {
    if (!k.budget) continue;
    const keys = [k.id, ...keysMadeBy(k.id, lineage)];
    let spent = 0;
    for (const id of keys) spent += await deps.ledger.keySpend(db, id, k.budget.period, now);
    const remaining = Math.max(0, k.budget.micros - spent);
    if (price <= remaining) continue;
    const whose = k.id === principal.keyId ? "this API key's budget" : `the budget of the API key ${k.id} that made this key`;
    throw Errors.insufficientBalance(
      `${whose} of ${describeBudget(k.budget)} has ${formatUsd(remaining, 4)} USD left, less than the price ${formatUsd(price, 3)} USD of this task; ` +
        `the operator can raise the budget${k.budget.period === 'total' ? '' : `, or wait for the next ${k.budget.period}`}`,
      { balance: formatUsd(remaining, 4), required: formatUsd(price, 4), currency: 'USD', topUpUrl: deps.topUpUrl },
    );
  }
}

/** Who made each key of the account. */
function keyLineage(db: Kysely<DB>, accountId: string): Promise<Array<{ id: string; created_by: string | null }>> {
  return db.selectFrom('api_keys').select(['id', 'created_by']).where('account_id', '=', accountId).execute();
}
