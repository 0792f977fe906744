import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { registerAdminRoutes } from './admin.js';
import { registerBalanceRoutes } from './balance.js';
import { registerCatalogRoutes } from './catalog.js';
import { registerPricingRoutes } from './pricing.js';
import { registerTaskRoutes } from './tasks.js';
import { registerFileRoutes } from './files.js';
import { registerUploadRoutes } from './upload.js';
import { registerOpsRoutes } from './ops.js';
import { registerDocsRoutes, trackRoutes } from './docs.js';
import { registerMcpRoutes } from './mcp.js';
import { registerUpstreamRoutes } from './upstream.js';

/** Every route area; each registers its own paths. */
export function registerRoutes(app: FastifyInstance, services: Services) {
  trackRoutes(app); // before any route: lists them for the OpenAPI coverage check
  registerOpsRoutes(app, services);
  registerBalanceRoutes(app, services);
  registerAdminRoutes(app, services);
  registerCatalogRoutes(app, services);
  registerPricingRoutes(app, services);
  registerTaskRoutes(app, services);
  registerFileRoutes(app, services);
  registerUploadRoutes(app, services);
  registerDocsRoutes(app, services);
  registerMcpRoutes(app, services);
  registerUpstreamRoutes(app, services);
}
