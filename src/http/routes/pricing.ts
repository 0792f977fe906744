import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { CalculatorError, calculatePrice, priceList, priceListBody } from '../../pricing/index.js';
import { limitPublic } from '../limits.js';

/** Prices change only with a restart (catalog file or USD_RUB_RATE), so clients may cache briefly. */
const CACHE = 'public, max-age=300';

/** True when If-None-Match names `etag` (or is `*`). */
function matches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes(etag) || tags.includes('*');
}

/** The pricing host (SPEC endpoints 7 and 8): no key, no envelope. */
export function registerPricingRoutes(app: FastifyInstance, services: Services) {
  const { catalog, config } = services;
  const list = priceListBody(priceList(catalog, { usdRubRate: config.USD_RUB_RATE, pricingBaseUrl: config.PRICING_BASE_URL }));

  const onRequest = limitPublic(services, 'pricing');
  app.get('/v1/pricing', { onRequest }, async (req, reply) => {
    reply.header('etag', list.etag).header('cache-control', CACHE);
    if (matches(req.headers['if-none-match'], list.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(list.body);
  });

  app.get('/v1/pricing/calculate', { onRequest }, async (req, reply) => {
    try {
      const result = calculatePrice(catalog, (req.query ?? {}) as Record<string, unknown>, config.USD_RUB_RATE);
      return reply.header('cache-control', CACHE).send(result);
    } catch (e) {
      if (e instanceof CalculatorError) return reply.code(400).header('cache-control', 'no-store').send(e.body());
      throw e;
    }
  });
}
