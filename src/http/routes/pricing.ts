import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { CalculatorError, calculatePrice, priceList, priceListBody } from '../../pricing/index.js';
import { limitPublic } from '../limits.js';

/** Prices change only with a restart (catalog file or USD_RUB_RATE), so clients may cache briefly. */
const CACHE = 'public, max-age=300';

/** Most distinct calculator queries remembered; past it the memo starts over. */
const MEMO_MAX = 1_000;

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

  // The answer is a pure function of the query, the catalog file and the RUB rate, all fixed until a
  // restart (the calculator prices disabled models too), so each distinct query is worked out once.
  const memo = new Map<string, { code: number; cache: string; body: string }>();
  const answer = (query: Record<string, unknown>) => {
    try {
      return { code: 200, cache: CACHE, body: JSON.stringify(calculatePrice(catalog, query, config.USD_RUB_RATE)) };
    } catch (e) {
      if (e instanceof CalculatorError) return { code: 400, cache: 'no-store', body: JSON.stringify(e.body()) };
      throw e;
    }
  };
  app.get('/v1/pricing/calculate', { onRequest }, async (req, reply) => {
    const key = req.url.slice(req.url.indexOf('?') + 1 || req.url.length);
    let hit = memo.get(key);
    if (!hit) {
      hit = answer((req.query ?? {}) as Record<string, unknown>);
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(key, hit);
    }
    return reply.code(hit.code).header('cache-control', hit.cache).type('application/json; charset=utf-8').send(hit.body);
  });
}
