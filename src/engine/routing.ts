import { routeName, type Catalog, type Route } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { HANDED_STATE_SQL } from './predicates.js';
import type { DB } from '../store/index.js';
import { Breaker, type BreakerSettings, type BreakerState } from './breaker.js';
import type { Backend, CreditReading } from '../backends/index.js';

/** One route of a model as the engine sees it. */
export interface RouteRef {
  readonly name: string;
  readonly index: number;
  readonly route: Route;
}

/** Health of one route for `/models` and metrics: the breaker, and for a route with an upstream account (kie) whether its credit is ok. */
export interface RouteHealthView {
  readonly backend: string;
  readonly state: BreakerState;
  /** `low`: below the route's min_credit, skipped; `unknown`: not read yet (or kie.ai did not answer). Only on routes whose account is read. */
  readonly credit?: 'ok' | 'low' | 'unknown';
}

/** Everything known about one upstream route, for the admin API. */
export interface RouteDetail {
  readonly model: string;
  readonly route: string;
  readonly backend: string;
  readonly state: BreakerState;
  readonly failuresInRow: number;
  readonly account: CreditReading | null;
}

/** The routes of a model, named; a model gone from the catalog keeps the route its task is on. */
export function routesOf(catalog: Catalog, modelId: string, current: string): RouteRef[] {
  const model = catalog.find(modelId);
  if (!model) return [{ name: current, index: 0, route: { backend: current === 'local' ? 'local' : 'unknown' } }];
  return model.routes.map((route, index) => ({ name: routeName(model.id, route, index), index, route }));
}

/**
 * Per-route circuit breakers and concurrency slots (issue 8). Breakers live in this process;
 * the concurrency limit counts the tasks handed to the route in the database (every process
 * together) plus the submits this process has in flight, so two steps here never both take the last slot.
 */
export class RouteHealth {
  private readonly breakers = new Map<string, Breaker>();
  private readonly submitting = new Map<string, number>();
  private readonly lowRoutes = new Set<string>();

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
    /** Backends by route name, for the routes whose upstream account (credit) is shown; none in tests that only count breakers. */
    private readonly backends: ReadonlyMap<string, Backend> = new Map(),
  ) {}

  /**
   * Why the route's upstream account cannot take a task now (kie.ai credit below min_credit), else
   * null. `warn` is told once when a route becomes low, and again only after it recovered.
   */
  async accountSkip(ref: RouteRef, backend: Backend, warn: (reason: string) => void): Promise<string | null> {
    const reason = backend.account ? await backend.account.check().catch(() => null) : null;
    if (reason && !this.lowRoutes.has(ref.name)) {
      this.lowRoutes.add(ref.name);
      warn(reason);
    } else if (!reason) this.lowRoutes.delete(ref.name);
    return reason;
  }

  /** The credit word of a route for `/models`, when its backend has an account. */
  private credit(ref: RouteRef): Pick<RouteHealthView, 'credit'> {
    const reading = this.backends.get(ref.name)?.account?.reading();
    if (!reading) return {};
    return { credit: reading.low ? 'low' : reading.credit === null ? 'unknown' : 'ok' };
  }

  /** The breaker of an upstream route (the in-process local backend has none). */
  breaker(ref: RouteRef): Breaker | null {
    if (ref.route.backend === 'local') return null;
    let b = this.breakers.get(ref.name);
    if (!b) {
      b = new Breaker(this.settings, this.clock);
      this.breakers.set(ref.name, b);
    }
    return b;
  }

  /** Takes a submit slot of a route with a concurrency limit; false when it is full. Give it back with `done`. */
  async reserve(database: Database, ref: RouteRef): Promise<boolean> {
    const limit = ref.route.concurrency;
    const mine = this.submitting.get(ref.name) ?? 0;
    this.submitting.set(ref.name, mine + 1);
    if (limit === undefined) return true;
    const row = await handedCount(database.db, ref.name).executeTakeFirst();
    if (Number(row?.n ?? 0) + mine < limit) return true;
    this.done(ref);
    return false;
  }

  /** Gives back a slot taken by `reserve`. */
  done(ref: RouteRef): void {
    const n = (this.submitting.get(ref.name) ?? 1) - 1;
    if (n <= 0) this.submitting.delete(ref.name);
    else this.submitting.set(ref.name, n);
  }

  /** Health of each route of a model, in route order. */
  view(catalog: Catalog, modelId: string): RouteHealthView[] {
    return routesOf(catalog, modelId, 'local').map((ref) => ({
      backend: ref.route.backend,
      state: this.breaker(ref)?.state() ?? 'closed',
      ...this.credit(ref),
    }));
  }

  /** Every upstream route with its breaker and its account's last reading (admin API). */
  details(catalog: Catalog): RouteDetail[] {
    return this.all(catalog).map(({ model, ref, breaker }) => ({
      model,
      route: ref.name,
      backend: ref.route.backend,
      state: breaker.state(),
      failuresInRow: breaker.failures,
      account: this.backends.get(ref.name)?.account?.reading() ?? null,
    }));
  }

  /** Every upstream route of the catalog with its model and breaker, for metrics. */
  all(catalog: Catalog): { model: string; ref: RouteRef; breaker: Breaker }[] {
    const out: { model: string; ref: RouteRef; breaker: Breaker }[] = [];
    for (const m of catalog.models) {
      for (const ref of routesOf(catalog, m.id, 'local')) {
        const breaker = this.breaker(ref);
        if (breaker) out.push({ model: m.id, ref, breaker });
      }
    }
    return out;
  }
}

/** How many tasks a route holds (queuing, generating); reads the partial index tasks_backend_handed (migration 007). */
export function handedCount(db: Kysely<DB>, routeName: string) {
  return db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('backend', '=', routeName)
    .where(sql.raw<boolean>(HANDED_STATE_SQL));
}
