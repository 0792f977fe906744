import type { FastifyInstance } from 'fastify';
import { KEYED_OPERATIONS } from '../../api/index.js';
import type { Services } from '../../services.js';
import { mountKeyed } from '../mount.js';
import { registerAdminRoutes } from './admin.js';
import { registerAuthRoutes } from './auth.js';
import { registerCatalogRoutes } from './catalog.js';
import { registerPricingRoutes } from './pricing.js';
import { registerFileRoutes } from './files.js';
import { registerUploadRoutes } from './upload.js';
import { KIE_UPLOAD_PATHS, registerKieUploadRoutes } from './kie-upload.js';
import { registerOpsRoutes } from './ops.js';
import { registerDocsRoutes, trackRoutes } from './docs.js';
import { registerMcpRoutes } from './mcp.js';
import { registerOAuthRoutes } from './oauth.js';
import { registerUpstreamRoutes } from './upstream.js';
import { registerPaymentRoutes } from './payments.js';
import { registerConsoleRoutes } from './console.js';
import { registerPreflights } from '../cors.js';

/** Every route area; each registers its own paths, and the keyed api/ operations are mounted as they are. */
export function registerRoutes(app: FastifyInstance, services: Services) {
  trackRoutes(app); // before any route: lists them for the OpenAPI coverage check
  registerOpsRoutes(app, services);
  for (const op of KEYED_OPERATIONS) mountKeyed(app, services, op); // createTask, recordInfo, list, balance, kie.ai's Suno pair, credit and download-url
  registerAuthRoutes(app, services);
  registerAdminRoutes(app, services);
  registerCatalogRoutes(app, services);
  registerPricingRoutes(app, services);
  registerFileRoutes(app, services);
  registerUploadRoutes(app, services);
  registerKieUploadRoutes(app, services);
  registerDocsRoutes(app, services);
  registerMcpRoutes(app, services);
  registerOAuthRoutes(app, services);
  registerUpstreamRoutes(app, services);
  registerPaymentRoutes(app, services);
  registerConsoleRoutes(app, services);
  // CORS preflights: the keyed API for CORS_ORIGINS, the public reads for every origin (docs/api.md).
  registerPreflights(app, [
    ...keyedPreflights(),
    ...['/api/v1/files/upload', ...KIE_UPLOAD_PATHS].map((path) => ({ path, kind: 'keyed' as const, methods: 'POST' })),
    ...['/api/v1/models', '/v1/pricing', '/v1/pricing/calculate', '/openapi.json', '/model-definition.schema.json'].map((path) => ({
      path,
      kind: 'public' as const,
      methods: 'GET, HEAD',
    })),
  ]);
}

/** One preflight per keyed path, allowing every method registered on it (GET and POST /api/v1/topups share one). */
function keyedPreflights() {
  const methods = new Map<string, string[]>();
  for (const op of KEYED_OPERATIONS) methods.set(op.spec.path, [...(methods.get(op.spec.path) ?? []), op.spec.method.toUpperCase()]);
  return [...methods].map(([path, list]) => ({ path, kind: 'keyed' as const, methods: list.join(', ') }));
}
