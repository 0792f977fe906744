import { Counter, Gauge, type Registry } from 'prom-client';
import type { Catalog } from '../catalog/index.js';
import { sql } from 'kysely';
import type { Database } from '../store/index.js';
import { HANDED_STATE_SQL } from './predicates.js';
import type { RouteHealth } from './routing.js';
import type { EngineDeps } from './deps.js';

const STATE_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

/**
 * The engine on /metrics. Route health (issue 8): each upstream route's breaker state and failures
 * in a row (this process's view), the tasks handed to each route right now (from the database, so
 * every process reports the same figure), and the submits of this process by outcome. Leases: the
 * failed renewals of this process (decision 0014). The counters returned here are the engine's.
 */
export function registerEngineMetrics(
  registry: Registry,
  health: RouteHealth,
  catalog: Catalog,
  database: Database,
): Pick<EngineDeps, 'countSubmit' | 'countHeartbeatFailure'> {
  const registers = [registry];
  const heartbeats = new Counter({
    name: 'gengate_engine_heartbeat_failures_total',
    help: 'Lease renewals of this process that failed: error (the database write failed), lost (another worker holds the task now)',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of ['error', 'lost']) heartbeats.inc({ reason }, 0);
  const submits = new Counter({
    name: 'gengate_route_submits_total',
    help: 'Submits of this process to each route by outcome: accepted, not_accepted (retried or failed over), refused (BackendFailure), unclear (not repeated, task refunded)',
    labelNames: ['route', 'outcome'],
    registers,
  });
  new Gauge({
    name: 'gengate_route_breaker_state',
    help: 'Circuit breaker of each upstream route: 0 closed (healthy), 1 half-open, 2 open (skipped)',
    labelNames: ['route', 'model', 'backend'],
    registers,
    collect() {
      this.reset();
      for (const { model, ref, breaker } of health.all(catalog)) this.set({ route: ref.name, model, backend: ref.route.backend }, STATE_VALUE[breaker.state()]);
    },
  });
  new Gauge({
    name: 'gengate_route_failures_in_row',
    help: 'Consecutive failures (not accepted, transient errors) of each upstream route',
    labelNames: ['route', 'model', 'backend'],
    registers,
    collect() {
      this.reset();
      for (const { model, ref, breaker } of health.all(catalog)) this.set({ route: ref.name, model, backend: ref.route.backend }, breaker.failures);
    },
  });
  new Gauge({
    name: 'gengate_route_upstream_credit',
    help: 'Credit left on the upstream account of each route that reads one (kie: kie.ai credits), as last read; absent until read',
    labelNames: ['route', 'model', 'backend'],
    registers,
    collect() {
      this.reset();
      for (const d of health.details(catalog))
        if (d.account?.credit != null) this.set({ route: d.route, model: d.model, backend: d.backend }, d.account.credit);
    },
  });
  new Gauge({
    name: 'gengate_route_credit_low',
    help: "1 when the route's upstream credit is below its min_credit (the route is skipped), else 0",
    labelNames: ['route', 'model', 'backend'],
    registers,
    collect() {
      this.reset();
      for (const d of health.details(catalog)) if (d.account) this.set({ route: d.route, model: d.model, backend: d.backend }, d.account.low ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gengate_route_in_flight',
    help: 'Tasks handed to each route and not finished (states queuing, generating)',
    labelNames: ['route'],
    registers,
    async collect() {
      const rows = await database.db
        .selectFrom('tasks')
        .select(['backend', (eb) => eb.fn.countAll().as('n')])
        .where(sql.raw<boolean>(HANDED_STATE_SQL))
        .groupBy('backend')
        .execute();
      this.reset();
      for (const r of rows) this.set({ route: r.backend }, Number(r.n));
    },
  });
  return { countSubmit: (route, outcome) => submits.inc({ route, outcome }), countHeartbeatFailure: (reason) => heartbeats.inc({ reason }) };
}

/** Tasks this process's engine holds and polls from memory (decision 2102): how far it is from ENGINE_IN_FLIGHT. */
export function registerHeldGauge(registry: Registry, held: () => number): void {
  new Gauge({
    name: 'gengate_engine_held_tasks',
    help: 'Tasks handed to upstreams that this process polls from memory (at most ENGINE_IN_FLIGHT)',
    registers: [registry],
    collect() {
      this.set(held());
    },
  });
}
