import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { registerAdminRoutes } from './admin.js';
import { registerBalanceRoutes } from './balance.js';

/** Every route area; each registers its own paths. */
export function registerRoutes(app: FastifyInstance, services: Services) {
  registerBalanceRoutes(app, services);
  registerAdminRoutes(app, services);
}
