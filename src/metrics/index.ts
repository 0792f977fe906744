import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../store/index.js';
import { MICROS_PER_USD } from '../billing/index.js';
import { RequestHistogram } from './requests.js';

/** Latency buckets in seconds: most answers are sub-millisecond to tens of ms; uploads and MCP waits are longer. */
// Written in milliseconds so that no bucket reads like a list price (test/catalog/docs.test.ts looks for prices in src/).
const BUCKETS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 120_000].map((ms) => ms / 1000);
/** Outcomes of one callback delivery attempt (issue 6 counts them). */
export const CALLBACK_OUTCOMES = ['delivered', 'retry', 'failed'] as const;
export type CallbackOutcome = (typeof CALLBACK_OUTCOMES)[number];
/** Why the server closed a connection itself (decisions 0310, 0315). */
export const CUT_REASONS = ['slow_request_body', 'slow_response_read', 'shutdown_grace', 'per_address_cap', 'per_address_cap_reset'] as const;
export type CutReason = (typeof CUT_REASONS)[number];

/**
 * Prometheus metrics of one process. Requests are counted here as they happen (one histogram
 * observation each); everything about tasks and money is read from the database at scrape
 * time, so every process reports the same, correct figures whichever process did the work.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly http: RequestHistogram;
  /** Incremented by callback delivery (issue 6), one per attempt, by outcome. */
  readonly callbackDeliveries: Counter<'outcome'>;
  /** Connections the HTTP server cut, by reason (src/http/connections.ts, src/http/drain.ts). */
  readonly connectionsCut: Counter<'reason'>;
  private readonly tasks: Gauge<'state' | 'model'>;
  private readonly queueDepth: Gauge;
  private readonly oldestWaiting: Gauge;
  private readonly callbacks: Gauge<'status'>;
  private readonly charged: Counter;
  private readonly refunded: Counter<'kind'>;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.http = new RequestHistogram('gengate_http_request_duration_seconds', 'HTTP requests by method, route pattern and status, with their latency', BUCKETS);
    this.registry.registerMetric(this.http as unknown as Metric);
    this.callbackDeliveries = new Counter({
      name: 'gengate_callback_deliveries_total',
      help: 'Callback delivery attempts by outcome (delivered, retry, failed)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of CALLBACK_OUTCOMES) this.callbackDeliveries.inc({ outcome }, 0);
    this.connectionsCut = new Counter({
      name: 'gengate_http_connections_cut_total',
      help: 'Connections the server closed itself: slow_request_body, slow_response_read, shutdown_grace, per_address_cap (answered 503), per_address_cap_reset',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of CUT_REASONS) this.connectionsCut.inc({ reason }, 0);
    this.tasks = new Gauge({ name: 'gengate_tasks', help: 'Tasks in the database by state and model', labelNames: ['state', 'model'], registers });
    this.queueDepth = new Gauge({ name: 'gengate_engine_queue_depth', help: 'Tasks accepted but not yet handed to a backend (state waiting)', registers });
    this.oldestWaiting = new Gauge({ name: 'gengate_engine_oldest_waiting_seconds', help: 'Age of the oldest task in state waiting (0 when none)', registers });
    this.callbacks = new Gauge({
      name: 'gengate_callbacks',
      help: 'Callbacks by delivery status (pending, delivered, failed)',
      labelNames: ['status'],
      registers,
    });
    const writes = () => this.database.writes();
    new Counter({
      name: 'gengate_database_write_transactions_total',
      help: 'Write transactions this process asked of the database (calls of tx; on SQLite several share one commit)',
      registers,
      collect() {
        this.reset();
        this.inc(writes().transactions);
      },
    });
    if (this.database.dialect === 'sqlite') {
      new Counter({
        name: 'gengate_database_rows_written_total',
        help: 'Rows this process inserted, updated or deleted (SQLite; on PostgreSQL see pg_stat_database)',
        registers,
        collect() {
          this.reset();
          this.inc(writes().rows ?? 0);
        },
      });
    }
    this.charged = new Counter({ name: 'gengate_charged_usd_total', help: 'USD charged for tasks (ledger charge entries)', registers });
    this.refunded = new Counter({
      name: 'gengate_refunded_usd_total',
      help: 'USD refunded for tasks by kind (full, partial)',
      labelNames: ['kind'],
      registers,
    });
  }

  /** Records one answered request; `route` is the route pattern (never the raw URL, which would explode the label set). */
  observeRequest(method: string, route: string | undefined, status: number, ms: number): void {
    this.http.observe(method, route ?? 'unmatched', status, ms / 1000);
  }

  /** The exposition text; reads the database figures first (one refresh shared by concurrent scrapes). */
  async render(): Promise<string> {
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = null;
    });
    await this.refreshing;
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private async refresh(): Promise<void> {
    const { db } = this.database;
    const [byState, waiting, callbacks, money] = await Promise.all([
      db
        .selectFrom('tasks')
        .select(['state', 'model', (eb) => eb.fn.countAll().as('n')])
        .groupBy(['state', 'model'])
        .execute(),
      db
        .selectFrom('tasks')
        .select([(eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.min('created_at').as('oldest')])
        .where('state', '=', 'waiting')
        .executeTakeFirst(),
      db
        .selectFrom('callbacks')
        .select(['status', (eb) => eb.fn.countAll().as('n')])
        .groupBy('status')
        .execute(),
      db
        .selectFrom('ledger_entries')
        .select(['kind', sql<number>`sum(amount_micros)`.as('micros')])
        .where('kind', 'in', ['charge', 'refund', 'partial_refund'])
        .groupBy('kind')
        .execute(),
    ]);
    this.tasks.reset();
    for (const r of byState) this.tasks.set({ state: r.state, model: r.model }, Number(r.n));
    this.queueDepth.set(Number(waiting?.n ?? 0));
    const oldest = waiting?.oldest === null || waiting?.oldest === undefined ? null : Number(waiting.oldest);
    this.oldestWaiting.set(oldest === null ? 0 : Math.max(0, (this.clock.now() - oldest) / 1000));
    this.callbacks.reset();
    for (const status of ['pending', 'delivered', 'failed']) this.callbacks.set({ status }, 0);
    for (const r of callbacks) this.callbacks.set({ status: r.status }, Number(r.n));
    const usd = (kind: string) => Math.abs(Number(money.find((m) => m.kind === kind)?.micros ?? 0)) / MICROS_PER_USD;
    // Totals come from the append-only ledger, so they only grow: set the counters to them.
    this.charged.reset();
    this.charged.inc(usd('charge'));
    this.refunded.reset();
    this.refunded.inc({ kind: 'full' }, usd('refund'));
    this.refunded.inc({ kind: 'partial' }, usd('partial_refund'));
  }
}
