import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { OPERATIONS } from '../../api/index.js';
import { buildDocument, openApiPath } from '../../openapi/index.js';
import { definitionJsonSchema } from '../../catalog/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after trackRoutes, as "METHOD /path" (Fastify's :param style). */
    registeredRoutes: string[];
  }
}

/**
 * Records every route as it is registered (Fastify's onRoute hook) and, once the app is ready,
 * warns about any route missing from the OpenAPI operations table. Call before any route.
 */
export function trackRoutes(app: FastifyInstance) {
  const routes: string[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
  });
  app.addHook('onReady', (done) => {
    const missing = undocumentedRoutes(routes);
    if (missing.length > 0) app.log.warn({ missing }, 'routes missing from the OpenAPI document: add them to src/api/operations.ts');
    done();
  });
}

/** Routes without an entry in OPERATIONS (HEAD is covered by its GET; Fastify adds it; OPTIONS is the CORS preflight, docs/api.md). */
export function undocumentedRoutes(routes: string[]): string[] {
  const documented = new Set(OPERATIONS.map((op) => `${op.method.toUpperCase()} ${openApiPath(op.path)}`));
  return routes.filter((r) => {
    const [method, url] = r.split(' ') as [string, string];
    if (method === 'OPTIONS') return false;
    const key = `${method === 'HEAD' ? 'GET' : method} ${openApiPath(url)}`;
    return !documented.has(key);
  });
}

/**
 * Swagger UI's files, as shipped inside the @fastify/swagger-ui npm package (nothing is fetched
 * from a CDN). Only these names are served; they are read on first use and kept in memory.
 */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const INIT_JS = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
  });
};
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>GenGate API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const require = createRequire(import.meta.url);
const cache = new Map<string, Buffer>();

function asset(name: string): Buffer {
  let bytes = cache.get(name);
  if (!bytes) {
    bytes = readFileSync(require.resolve(`@fastify/swagger-ui/static/${name}`));
    cache.set(name, bytes);
  }
  return bytes;
}

/** GET /openapi.json (the OpenAPI 3.1 document, built again only when the catalog's models change) and the reference page /docs rendered from it. */
export function registerDocsRoutes(app: FastifyInstance, services: Services) {
  const { config, catalog } = services;
  // A stored definition changed live (decision 3305) gives the catalog new models, and the document with them.
  let kept = { models: catalog.models, body: JSON.stringify(buildDocument(config, catalog)) };
  const document = () => {
    if (kept.models !== catalog.models) kept = { models: catalog.models, body: JSON.stringify(buildDocument(config, catalog.snapshot?.() ?? catalog)) };
    return kept.body;
  };
  const csp = `default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self' ${config.PUBLIC_BASE_URL} ${config.PRICING_BASE_URL}`;

  app.get('/openapi.json', { config: { cors: 'public' } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300').send(document()),
  );

  // The model definition format's JSON Schema at a stable address (decision 3300), for editors and `gengate models check`'s users.
  const definitionSchema = JSON.stringify(definitionJsonSchema());
  app.get('/model-definition.schema.json', { config: { cors: 'public' } }, async (_req, reply) =>
    reply
      .type('application/schema+json; charset=utf-8')
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=300')
      .send(definitionSchema),
  );

  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').header('content-security-policy', csp).send(PAGE));

  app.get('/docs/:asset', async (req, reply) => {
    const name = (req.params as { asset: string }).asset;
    reply.header('cache-control', 'public, max-age=86400');
    if (name === 'init.js') return reply.type('application/javascript; charset=utf-8').send(INIT_JS);
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) throw Errors.notFound(`no file /docs/${name}`);
    return reply.type(type).send(asset(name));
  });
}
