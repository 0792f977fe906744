import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { ADMIN_OPERATIONS } from '../../api/index.js';
import { adminActors, mountAdmin } from '../mount.js';
import { requireSession, sessionToken } from '../session.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The admin API under /admin/v1/*, bearer ADMIN_TOKEN, or the session cookie of a member with the
 * operator role (a change with the session's CSRF token; decision 1903); not registered at all
 * without ADMIN_TOKEN (so 404).
 */
export function registerAdminRoutes(app: FastifyInstance, services: Services) {
  const token = services.config.ADMIN_TOKEN;
  if (!token) return;
  const expected = digest(`Bearer ${token}`);

  app.register(async (admin) => {
    admin.addHook('onRequest', async (req: FastifyRequest) => {
      const given = req.headers.authorization;
      if (given === undefined && sessionToken(req) !== undefined) {
        const session = await requireSession(services, req);
        if (session.member?.role !== 'operator') throw Errors.forbidden("admin API: this session is not an operator's (role operator)");
        adminActors.set(req, `member:${session.member.email ?? session.member.id}`);
        return;
      }
      if (!given || !timingSafeEqual(digest(given), expected)) {
        throw Errors.unauthenticated('admin API: send Authorization: Bearer <ADMIN_TOKEN>');
      }
      // The token names no one: a caller may say who it acts for (kept with the versions it makes).
      const actor = req.headers['x-gengate-actor'];
      adminActors.set(req, typeof actor === 'string' && /^[\w.@+:/ -]{1,100}$/.test(actor) ? `admin-token:${actor}` : 'admin-token');
    });
    for (const op of ADMIN_OPERATIONS) mountAdmin(admin, services, op);
  });
}
