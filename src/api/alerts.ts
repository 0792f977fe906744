import { z } from 'zod';
import type { KeyedOperation } from './operation.js';
import { parseWith } from '../errors.js';
import { parseUsd } from '../billing/index.js';
import { callbackUrlCheck } from '../callbacks/index.js';

/** The body of PUT /api/v1/account/alert and of the admin's POST /admin/v1/accounts/:id/alert; a missing field keeps its value. */
export const alertBody = z
  .object({
    level: z
      .union([z.string(), z.number()])
      .refine((v) => (parseUsd(v) ?? 0) > 0, 'must be a positive USD amount such as "5" or "2.50" (at most 6 decimals)')
      .nullable()
      .optional()
      .describe('USD; the alert fires when the balance falls below it. null turns the alert off'),
    url: z.string().max(2000).nullable().optional().describe('Where the signed balance.low webhook is POSTed; null: no webhook'),
    email: z.boolean().optional().describe("Email the account's owners too (when the server has SMTP)"),
  })
  .strict();

export const Alert = z.object({
  level: z.string().nullable().describe('USD with 4 decimals; null: no alert'),
  url: z.string().nullable(),
  email: z.boolean(),
  armed: z.boolean().describe('true while the balance is at or above the level: the next fall below it sends the alert'),
});

/** GET /api/v1/account/alert */
export const getAlert: KeyedOperation = {
  spec: {
    method: 'get',
    path: '/api/v1/account/alert',
    id: 'getAlert',
    tag: 'Account',
    auth: 'key',
    scope: 'balance:read',
    summary: "The account's low-balance alert",
    ok: { schema: Alert, envelope: true, description: 'The alert settings' },
  },
  handler:
    (services) =>
    async ({ principal }) => ({ data: await services.alerts.get(principal.accountId) }),
};

/** PUT /api/v1/account/alert */
export const setAlert: KeyedOperation = {
  spec: {
    method: 'put',
    path: '/api/v1/account/alert',
    id: 'setAlert',
    tag: 'Account',
    auth: 'key',
    scope: 'billing',
    summary: "Set the account's low-balance alert",
    description:
      'When a charge or debit takes the balance from at least the level to below it, one signed balance.low webhook goes to url and, with SMTP, one email to the owners; not again until the balance is back at or above the level. A key with the scope billing, or an owner signed in (billing is a scope of owners: the session of a member and the keys a member makes lack it).',
    body: alertBody,
    ok: { schema: Alert, envelope: true, description: 'The alert settings' },
    errors: ['invalid_request'],
  },
  handler: (services) => {
    const check = callbackUrlCheck(services.guard, 'url');
    return async ({ principal, body }) => {
      return { data: await services.alerts.set(principal.accountId, parseWith(alertBody, body, ''), check) };
    };
  },
};
