import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/store/schema.js';

/** What the chaos run found wrong; every list empty means every promise held. */
export interface Findings {
  /** Task ids a client was given that have no row, or that are not final after the drain. */
  lostTasks: string[];
  /** Tasks with more than one charge, or (account, Idempotency-Key) pairs bound to more than one task. */
  doubleCharges: string[];
  /** Tasks refunded more than once, refunded for a success, or failed without their refund. */
  wrongRefunds: string[];
  /** Accounts whose balance is not the sum of their ledger entries, or is below zero. */
  balanceNotLedger: string[];
  /** Tasks with a callBackUrl whose callback was never delivered. */
  undelivered: string[];
  /** Tasks whose deliveries came under more than one webhook-id (or two tasks under one). */
  callbackIds: string[];
}

/** One webhook delivery the receiver saw. */
export interface Delivery {
  taskId: string;
  webhookId: string;
}

/** Reads the database after the drain and checks the money and delivery promises for the `given` task ids. */
export async function findProblems(db: Kysely<DB>, given: Map<string, string>, deliveries: Delivery[]): Promise<Findings> {
  const tasks = await db.selectFrom('tasks').select(['id', 'state', 'callback_url']).execute();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const lostTasks = [...given.keys()].filter((id) => !byId.has(id) || !['success', 'fail'].includes(byId.get(id)!.state));

  const entries = await db.selectFrom('ledger_entries').select(['task_id', 'kind', 'amount_micros']).where('task_id', 'is not', null).execute();
  const ofTask = new Map<string, Array<{ kind: string; amount: number }>>();
  for (const e of entries) ofTask.set(e.task_id!, [...(ofTask.get(e.task_id!) ?? []), { kind: e.kind, amount: Number(e.amount_micros) }]);
  const doubleCharges: string[] = [];
  const wrongRefunds: string[] = [];
  for (const t of tasks) {
    const mine = ofTask.get(t.id) ?? [];
    const charges = mine.filter((e) => e.kind === 'charge');
    if (charges.length !== 1) doubleCharges.push(`${t.id}: ${charges.length} charges`);
    const refunds = mine.filter((e) => e.kind === 'refund');
    const want = t.state === 'fail' ? 1 : 0;
    if (refunds.length !== want) wrongRefunds.push(`${t.id} (${t.state}): ${refunds.length} refunds`);
    else if (want && charges[0] && refunds[0]!.amount !== -charges[0].amount)
      wrongRefunds.push(`${t.id}: refund ${refunds[0]!.amount} for charge ${charges[0].amount}`);
  }
  // The client remembers which key it sent for each task: one key, one task.
  const taskOfKey = new Map<string, Set<string>>();
  for (const [taskId, key] of given) taskOfKey.set(key, (taskOfKey.get(key) ?? new Set()).add(taskId));
  for (const [key, ids] of taskOfKey) if (ids.size > 1) doubleCharges.push(`Idempotency-Key ${key}: tasks ${[...ids].join(', ')}`);

  const sums = await db
    .selectFrom('accounts')
    .leftJoin('ledger_entries', 'ledger_entries.account_id', 'accounts.id')
    .select(['accounts.id', 'accounts.balance_micros', sql<string>`coalesce(sum(ledger_entries.amount_micros), 0)`.as('total')])
    .groupBy(['accounts.id', 'accounts.balance_micros'])
    .execute();
  const balanceNotLedger = sums
    .filter((a) => Number(a.balance_micros) !== Number(a.total) || Number(a.balance_micros) < 0)
    .map((a) => `${a.id}: balance ${a.balance_micros}, ledger ${a.total}`);

  const callbacks = await db.selectFrom('callbacks').select(['task_id', 'status', 'attempts', 'last_status_code', 'last_error']).execute();
  const undelivered = callbacks
    .filter((c) => c.status !== 'delivered' && given.has(c.task_id))
    .map((c) => `${c.task_id}: ${c.status} after ${c.attempts} attempts (last: ${c.last_status_code ?? ''} ${c.last_error ?? ''})`);
  const idsOf = new Map<string, Set<string>>();
  const tasksOfId = new Map<string, Set<string>>();
  for (const d of deliveries) {
    idsOf.set(d.taskId, (idsOf.get(d.taskId) ?? new Set()).add(d.webhookId));
    tasksOfId.set(d.webhookId, (tasksOfId.get(d.webhookId) ?? new Set()).add(d.taskId));
  }
  const callbackIds = [
    ...[...idsOf].filter(([, ids]) => ids.size > 1).map(([t, ids]) => `${t}: webhook-ids ${[...ids].join(', ')}`),
    ...[...tasksOfId].filter(([, ts]) => ts.size > 1).map(([id, ts]) => `webhook-id ${id}: tasks ${[...ts].join(', ')}`),
  ];
  return { lostTasks, doubleCharges, wrongRefunds, balanceNotLedger, undelivered, callbackIds };
}

/** The number of findings of every kind together. */
export function countFindings(f: Findings): number {
  return Object.values(f).reduce((n, list: string[]) => n + list.length, 0);
}
