import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { ADMIN_OPERATIONS } from '../../api/index.js';
import { mountAdmin } from '../mount.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The admin API under /admin/v1/*, bearer ADMIN_TOKEN; not registered at all without ADMIN_TOKEN (so 404). */
export function registerAdminRoutes(app: FastifyInstance, services: Services) {
  const token = services.config.ADMIN_TOKEN;
  if (!token) return;
  const expected = digest(`Bearer ${token}`);

  app.register(async (admin) => {
    admin.addHook('onRequest', async (req: FastifyRequest) => {
      const given = req.headers.authorization;
      if (!given || !timingSafeEqual(digest(given), expected)) {
        throw Errors.unauthenticated('admin API: send Authorization: Bearer <ADMIN_TOKEN>');
      }
    });
    for (const op of ADMIN_OPERATIONS) mountAdmin(admin, services, op);
  });
}
