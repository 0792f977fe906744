import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { modelEntry } from '../../catalog/index.js';
import { ok } from '../../api/index.js';
import { limitPublic } from '../limits.js';

/** GET /api/v1/models (no key): envelope, `data` = every catalog entry, disabled ones included and marked, with the health of its routes. */
export function registerCatalogRoutes(app: FastifyInstance, services: Services) {
  const { catalog, config, routeHealth } = services;
  // The body (tens of KB of JSON Schema) is serialised again only when a model switch changed the catalog's models or a route's breaker changed state.
  let cached: { models: typeof catalog.models; health: string; body: string } | null = null;
  const body = () => {
    const views = catalog.models.map((m) => routeHealth.view(catalog, m.id));
    const health = views.map((v) => v.map((r) => `${r.state}/${r.credit ?? ''}`).join(',')).join(';');
    if (cached?.models !== catalog.models || cached.health !== health) {
      const models = catalog.models;
      const entries = models.map((m, i) => ({
        ...modelEntry(m, { usdRubRate: config.USD_RUB_RATE, pricingBaseUrl: config.PRICING_BASE_URL }),
        routes: views[i],
      }));
      cached = { models, health, body: JSON.stringify(ok(entries)) };
    }
    return cached.body;
  };
  app.get('/api/v1/models', { onRequest: limitPublic(services), config: { cors: 'public' } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(body()),
  );
}
