import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { modelEntry } from '../../catalog/index.js';
import { ok } from '../envelope.js';
import { limitPublic } from '../limits.js';

/** GET /api/v1/models (no key): envelope, `data` = every catalog entry, disabled ones included and marked. */
export function registerCatalogRoutes(app: FastifyInstance, services: Services) {
  const { catalog, config } = services;
  // The body (tens of KB of JSON Schema) is serialised again only when a model switch changed the catalog's models.
  let cached: { models: typeof catalog.models; body: string } | null = null;
  const body = () => {
    if (cached?.models !== catalog.models) {
      const models = catalog.models;
      cached = { models, body: JSON.stringify(ok(models.map((m) => modelEntry(m, { usdRubRate: config.USD_RUB_RATE, pricingBaseUrl: config.PRICING_BASE_URL })))) };
    }
    return cached.body;
  };
  app.get('/api/v1/models', { onRequest: limitPublic(services) }, async (_req, reply) => reply.type('application/json; charset=utf-8').send(body()));
}
