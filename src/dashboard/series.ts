import { sql, type Kysely } from 'kysely';
import { ACTIVE_STATE_SQL } from '../engine/index.js';
import type { Database, DB } from '../store/index.js';

export const MINUTE_MS = 60_000;

/** The operator dashboard's figures: per-minute series over the last `minutes` minutes, read from the database (decision 2002). */
export interface DashboardSeries {
  /** Start of each one-minute bucket (Unix ms, UTC minute boundaries); the last is the current minute. */
  minutes: number[];
  tasks: { created: number[]; succeeded: number[]; failed: number[] };
  /** Failed tasks per failure code (the task's failCode), per minute. */
  failuresByCode: Record<string, number[]>;
  /** Tasks not final (waiting, queuing or generating) at the end of each minute. */
  inFlight: number[];
  /** Now: tasks per active state (`waiting` is the gengate_queue_depth gauge). */
  now: { waiting: number; queuing: number; generating: number };
  /** Now: tasks not final per model and route (its position in the model's routes, from 0): the concurrency in use. */
  active: Array<{ model: string; routeIndex: number; state: 'waiting' | 'queuing' | 'generating'; count: number }>;
  /** Task callback delivery attempts per minute: answered 2xx, or not. */
  callbacks: { delivered: number[]; failed: number[] };
  /** Money per minute in micro-USD, from the ledger: charges (positive), full and partial refunds (positive). */
  money: { chargedMicros: number[]; refundedMicros: number[] };
}

const bucketOf = (column: string, start: number) => sql<number>`cast((${sql.ref(column)} - ${start}) / ${MINUTE_MS} as integer)`;

/**
 * The dashboard's reads from `start` on, one query per figure. Each time filter has an index to
 * range over (migration 017), so a read costs the rows of the window, not the table; the active
 * counts read the partial index of active tasks (migration 006), spelled as the engine's claim spells it.
 */
export function dashboardQueries(db: Kysely<DB>, start: number) {
  return {
    created: db
      .selectFrom('tasks')
      .select([bucketOf('created_at', start).as('b'), (eb) => eb.fn.countAll().as('n')])
      .where('created_at', '>=', start)
      .groupBy('b'),
    completed: db
      .selectFrom('tasks')
      .select([bucketOf('completed_at', start).as('b'), 'state', (eb) => eb.fn.countAll().as('n')])
      .where('completed_at', '>=', start)
      .groupBy(['b', 'state']),
    failures: db
      .selectFrom('tasks')
      .select([bucketOf('completed_at', start).as('b'), 'fail_code', (eb) => eb.fn.countAll().as('n')])
      .where('completed_at', '>=', start)
      .where('state', '=', 'fail')
      .groupBy(['b', 'fail_code']),
    active: db
      .selectFrom('tasks')
      .select(['model', 'route_index', 'state', (eb) => eb.fn.countAll().as('n')])
      .where(sql.raw<boolean>(ACTIVE_STATE_SQL))
      .groupBy(['model', 'route_index', 'state']),
    attempts: db
      .selectFrom('webhook_attempts')
      .select([bucketOf('at', start).as('b'), 'ok', (eb) => eb.fn.countAll().as('n')])
      .where('at', '>=', start)
      .where('task_id', 'is not', null)
      .where('kind', '!=', 'test')
      .groupBy(['b', 'ok']),
    money: db
      .selectFrom('ledger_entries')
      .select([bucketOf('created_at', start).as('b'), 'kind', sql<number>`sum(amount_micros)`.as('micros')])
      .where('created_at', '>=', start)
      .where('kind', 'in', ['charge', 'refund', 'partial_refund'])
      .groupBy(['b', 'kind']),
  };
}

/**
 * Per-minute counts grouped in the database (a query per figure, whole numbers only; the bucket
 * is an integer division on both SQLite and PostgreSQL). The in-flight series is derived from
 * the tasks not final now, walking back: a task created after a minute's end was not in flight
 * then, a task completed after it was.
 */
export async function dashboardSeries(database: Database, now: number, minutes: number): Promise<DashboardSeries> {
  const end = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const start = end - minutes * MINUTE_MS;
  const zeros = () => new Array<number>(minutes).fill(0);
  const q = dashboardQueries(database.db, start);
  const [created, completed, failures, active, attempts, money] = await Promise.all([
    q.created.execute(),
    q.completed.execute(),
    q.failures.execute(),
    q.active.execute(),
    q.attempts.execute(),
    q.money.execute(),
  ]);
  const at = (b: unknown) => {
    const i = Number(b);
    return i >= 0 && i < minutes ? i : -1;
  };
  const out: DashboardSeries = {
    minutes: Array.from({ length: minutes }, (_, i) => start + i * MINUTE_MS),
    tasks: { created: zeros(), succeeded: zeros(), failed: zeros() },
    failuresByCode: {},
    inFlight: zeros(),
    now: { waiting: 0, queuing: 0, generating: 0 },
    active: [],
    callbacks: { delivered: zeros(), failed: zeros() },
    money: { chargedMicros: zeros(), refundedMicros: zeros() },
  };
  for (const r of created) if (at(r.b) >= 0) out.tasks.created[at(r.b)]! += Number(r.n);
  for (const r of completed) {
    const i = at(r.b);
    if (i < 0) continue;
    if (r.state === 'success') out.tasks.succeeded[i]! += Number(r.n);
    if (r.state === 'fail') out.tasks.failed[i]! += Number(r.n);
  }
  for (const r of failures) {
    const i = at(r.b);
    if (i < 0) continue;
    const code = r.fail_code === null ? 'none' : String(r.fail_code);
    (out.failuresByCode[code] ??= zeros())[i]! += Number(r.n);
  }
  for (const r of active) {
    const state = r.state as keyof DashboardSeries['now'];
    out.now[state] += Number(r.n);
    out.active.push({ model: r.model, routeIndex: Number(r.route_index), state, count: Number(r.n) });
  }
  out.active.sort((x, y) => x.model.localeCompare(y.model) || x.routeIndex - y.routeIndex || x.state.localeCompare(y.state));
  for (const r of attempts) {
    const i = at(r.b);
    if (i >= 0) (Number(r.ok) ? out.callbacks.delivered : out.callbacks.failed)[i]! += Number(r.n);
  }
  for (const r of money) {
    const i = at(r.b);
    if (i < 0) continue;
    if (r.kind === 'charge') out.money.chargedMicros[i]! += -Number(r.micros);
    else out.money.refundedMicros[i]! += Number(r.micros);
  }
  // Walk back from now: in flight at the end of minute i = in flight now - created after it + completed after it.
  let depth = out.now.waiting + out.now.queuing + out.now.generating;
  for (let i = minutes - 1; i >= 0; i--) {
    out.inFlight[i] = Math.max(0, depth);
    depth += -out.tasks.created[i]! + out.tasks.succeeded[i]! + out.tasks.failed[i]!;
  }
  return out;
}
