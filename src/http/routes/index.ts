import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { registerAdminRoutes } from './admin.js';
import { registerBalanceRoutes } from './balance.js';
import { registerCatalogRoutes } from './catalog.js';
import { registerPricingRoutes } from './pricing.js';
import { registerTaskRoutes } from './tasks.js';
import { registerFileRoutes } from './files.js';

/** Every route area; each registers its own paths. */
export function registerRoutes(app: FastifyInstance, services: Services) {
  registerBalanceRoutes(app, services);
  registerAdminRoutes(app, services);
  registerCatalogRoutes(app, services);
  registerPricingRoutes(app, services);
  registerTaskRoutes(app, services);
  registerFileRoutes(app, services);
}
