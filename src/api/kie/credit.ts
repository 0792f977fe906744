import { z } from 'zod';
import { usdNumber } from '../../billing/index.js';
import { okJson } from '../envelope.js';
import type { KeyedOperation } from '../operation.js';

/** GET /api/v1/chat/credit (kie.ai, KIE.md §3): `data` is the balance in USD as a bare number (GenGate has no credits). */
export const chatCredit: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/chat/credit',
    id: 'kieChatCredit',
    tag: 'kie.ai compatibility',
    auth: 'key',
    scope: 'balance:read',
    summary: "kie.ai's credit query: the balance in USD as a number",
    description: 'The balance of /api/v1/user/balance as a bare number of US dollars (e.g. 12.34): GenGate has no credits. Same key rules and read budget.',
    ok: { schema: z.number().describe('Balance in USD'), envelope: true, description: 'The balance' },
  },
  handler:
    (services) =>
    async ({ principal }) => ({
      text: okJson(JSON.stringify(usdNumber(await services.accounts.balanceMicros(principal.accountId)))),
    }),
};
