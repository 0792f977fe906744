import { formatUsd, toRub } from '../billing/index.js';
import { okJson } from './envelope.js';
import type { KeyedOperation } from './operation.js';
import * as S from './schemas.js';

/** Most balance answers kept as text (one per amount); past it the map starts again empty. */
const MAX_TEXTS = 1000;

/** `data` of the balance answer (REST and the MCP tool get_balance). */
export function balanceView(micros: number, usdRubRate: number) {
  return { balance: formatUsd(micros, 4), currency: 'USD', balanceRub: toRub(micros, usdRubRate) };
}

/** GET /api/v1/user/balance → {balance: "12.3400", currency: "USD", balanceRub}. */
export const balance: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/user/balance',
    id: 'balance',
    tag: 'Account',
    auth: 'key',
    scope: 'balance:read',
    summary: 'Balance of the account',
    ok: { schema: S.Balance, envelope: true, description: 'The balance' },
  },
  handler: (services) => {
    const rate = services.config.USD_RUB_RATE;
    // The answer depends only on the amount (the rate is fixed for the life of the process), so a
    // poll of an unchanged balance sends the text made for the first one (formatting, the exact
    // rouble conversion and serialising were a tenth of a cached poll: measured).
    const texts = new Map<number, string>();
    const textOf = (micros: number): string => {
      let text = texts.get(micros);
      if (text === undefined) {
        text = okJson(JSON.stringify(balanceView(micros, rate)));
        if (texts.size >= MAX_TEXTS) texts.clear();
        texts.set(micros, text);
      }
      return text;
    };
    return async ({ principal }) => ({ text: textOf(await services.accounts.balanceMicros(principal.accountId)) });
  },
};
