import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { formatUsd, toRub } from '../../billing/index.js';
import { okJson } from '../envelope.js';
import { principalOf, requireKey } from '../auth.js';

/** Most balance answers kept as text (one per amount); past it the map starts again empty. */
const MAX_TEXTS = 1000;

/** GET /api/v1/user/balance → {balance: "12.3400", currency: "USD", balanceRub}. */
export function registerBalanceRoutes(app: FastifyInstance, services: Services) {
  const rate = services.config.USD_RUB_RATE;
  // The answer depends only on the amount (the rate is fixed for the life of the process), so a
  // poll of an unchanged balance sends the text made for the first one (formatting, the exact
  // rouble conversion and serialising were a tenth of a cached poll: measured).
  const texts = new Map<number, string>();
  const textOf = (micros: number): string => {
    let text = texts.get(micros);
    if (text === undefined) {
      text = okJson(JSON.stringify({ balance: formatUsd(micros, 4), currency: 'USD', balanceRub: toRub(micros, rate) }));
      if (texts.size >= MAX_TEXTS) texts.clear();
      texts.set(micros, text);
    }
    return text;
  };
  app.get('/api/v1/user/balance', { preHandler: requireKey(services, 'balance:read') }, async (req, reply) => {
    const { accountId } = principalOf(req);
    const micros = await services.accounts.balanceMicros(accountId);
    return reply.type('application/json; charset=utf-8').send(textOf(micros));
  });
}
