import { routeName, type Catalog, type Route } from '../catalog/index.js';
import type { Clock } from '../clock.js';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { HANDED_STATE_SQL } from './predicates.js';
import type { DB } from '../store/index.js';
import { Breaker, type BreakerSettings, type BreakerState } from './breaker.js';

/** One route of a model as the engine sees it. */
export interface RouteRef {
  readonly name: string;
  readonly index: number;
  readonly route: Route;
}

/** Health of one route for `/models` and metrics. */
export interface RouteHealthView {
  readonly backend: string;
  readonly state: BreakerState;
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

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

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
    return routesOf(catalog, modelId, 'local').map((ref) => ({ backend: ref.route.backend, state: this.breaker(ref)?.state() ?? 'closed' }));
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
