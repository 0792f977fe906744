import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { formatUsd, toRub } from '../../billing/index.js';
import { ok } from '../envelope.js';
import { principalOf, requireKey } from '../auth.js';

/** GET /api/v1/user/balance → {balance: "12.3400", currency: "USD", balanceRub}. */
export function registerBalanceRoutes(app: FastifyInstance, services: Services) {
  app.get('/api/v1/user/balance', { preHandler: requireKey(services, 'balance:read') }, async (req) => {
    const { accountId } = principalOf(req);
    const micros = await services.accounts.balanceMicros(accountId);
    return ok({ balance: formatUsd(micros, 4), currency: 'USD', balanceRub: toRub(micros, services.config.USD_RUB_RATE) });
  });
}
