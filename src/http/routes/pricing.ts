import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { CalculatorError, calculatePrice, priceList, priceListBody } from '../../pricing/index.js';
import { limitPublic } from '../limits.js';
import { boundedCache, cached } from '../../cache.js';

/**
 * Prices change with a restart (catalog file or USD_RUB_RATE) or a stored definition (decision 3305);
 * the list's `enabled` flags change with the operator's model switches, and the ETag with them, so
 * clients may cache briefly and revalidate.
 */
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
  // Built again only when a model switch (this process's or, within MODEL_SWITCH_CACHE_MS, another's)
  // gave the catalog new models: the ETag hashes the body, so every process with the same switches agrees.
  let kept: { models: typeof catalog.models; list: { body: string; etag: string } } | null = null;
  const current = () => {
    if (kept?.models !== catalog.models) {
      const models = catalog.models;
      kept = { models, list: priceListBody(priceList(catalog, { usdRubRate: config.USD_RUB_RATE, pricingBaseUrl: config.PRICING_BASE_URL })) };
    }
    return kept.list;
  };

  const onRequest = limitPublic(services, 'pricing');
  app.get('/v1/pricing', { onRequest, config: { cors: 'public' } }, async (req, reply) => {
    const list = current();
    reply.header('etag', list.etag).header('cache-control', CACHE);
    if (matches(req.headers['if-none-match'], list.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(list.body);
  });

  // The answer is a pure function of the query, the catalog's models and the RUB rate (the calculator
  // prices disabled models too), so each distinct query is worked out once per catalog: a stored
  // definition changed live (decision 3305) starts the memo over.
  const memo = boundedCache<string, { code: number; cache: string; body: string }>(MEMO_MAX);
  let memoModels = catalog.models;
  const answer = (query: Record<string, unknown>) => {
    try {
      return { code: 200, cache: CACHE, body: JSON.stringify(calculatePrice(catalog, query, config.USD_RUB_RATE)) };
    } catch (e) {
      if (e instanceof CalculatorError) return { code: 400, cache: 'no-store', body: JSON.stringify(e.body()) };
      throw e;
    }
  };
  app.get('/v1/pricing/calculate', { onRequest, config: { cors: 'public' } }, async (req, reply) => {
    if (memoModels !== catalog.models) {
      memo.clear();
      memoModels = catalog.models;
    }
    const key = req.url.slice(req.url.indexOf('?') + 1 || req.url.length);
    const hit = cached(memo, key, () => answer((req.query ?? {}) as Record<string, unknown>));
    return reply.code(hit.code).header('cache-control', hit.cache).type('application/json; charset=utf-8').send(hit.body);
  });
}
