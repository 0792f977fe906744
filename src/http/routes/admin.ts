import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { Errors } from '../../errors.js';
import { entriesCsv, entryView, parseUsd } from '../../billing/index.js';
import { ok } from '../envelope.js';
import { parseWith } from '../validate.js';
import { adminBodies } from '../requests.js';

const idParams = z.object({ id: z.string().min(1).max(100) });

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The admin API under /admin/v1/*, bearer ADMIN_TOKEN; not registered at all without ADMIN_TOKEN (so 404). */
export function registerAdminRoutes(app: FastifyInstance, services: Services) {
  const token = services.config.ADMIN_TOKEN;
  if (!token) return;
  const expected = digest(`Bearer ${token}`);
  const { accounts } = services;

  app.register(async (admin) => {
    admin.addHook('onRequest', async (req: FastifyRequest) => {
      const given = req.headers.authorization;
      if (!given || !timingSafeEqual(digest(given), expected)) {
        throw Errors.unauthenticated('admin API: send Authorization: Bearer <ADMIN_TOKEN>');
      }
    });
    const id = (req: FastifyRequest) => parseWith(idParams, req.params, '').id;
    // Model ids may contain a slash (vendor/name): send it URL-encoded.
    const modelId = (req: FastifyRequest) => decodeURIComponent(String((req.params as { id?: string }).id ?? ''));

    admin.post('/accounts', async (req) => {
      const body = parseWith(adminBodies.createAccount, req.body, '');
      return ok(await accounts.create(body.name, body.balance === undefined ? 0 : parseUsd(body.balance)!));
    });
    admin.get('/accounts', async () => ok(await accounts.list()));
    admin.get('/accounts/:id', async (req) => ok(await accounts.get(id(req))));
    admin.post('/accounts/:id/disable', async (req) => ok(await accounts.setStatus(id(req), 'disabled')));
    admin.post('/accounts/:id/enable', async (req) => ok(await accounts.setStatus(id(req), 'active')));
    admin.post('/accounts/:id/topup', async (req) => {
      const body = parseWith(adminBodies.topup, req.body, '');
      return ok(await accounts.topup(id(req), parseUsd(body.amount)!, body.note ?? ''));
    });
    admin.post('/accounts/:id/limits', async (req) => ok(await accounts.setLimits(id(req), parseWith(adminBodies.limits, req.body, ''))));
    admin.post('/accounts/:id/keys', async (req) => ok(await accounts.createKey(id(req), parseWith(adminBodies.createKey, req.body, ''))));
    admin.get('/accounts/:id/keys', async (req) => ok(await accounts.listKeys(id(req))));
    admin.post('/keys/:id/revoke', async (req) => ok(await accounts.revokeKey(id(req))));
    admin.get('/models', async () => ok(await services.models.list()));
    admin.post('/models/:id/disable', async (req) => ok(await services.models.set(modelId(req), false)));
    admin.post('/models/:id/enable', async (req) => ok(await services.models.set(modelId(req), true)));
    admin.get('/accounts/:id/ledger', async (req, reply) => {
      const entries = await accounts.ledgerEntries(id(req));
      if ((req.query as { format?: string }).format === 'csv') {
        return reply.type('text/csv; charset=utf-8').send(entriesCsv(entries));
      }
      return ok(entries.map(entryView));
    });
  }, { prefix: '/admin/v1' });
}
