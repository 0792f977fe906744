import { z } from 'zod';
import { BUDGET_PERIODS, SCOPES } from '../accounts/index.js';
import { parseWith } from '../errors.js';
import { isoTime, money, time, usd } from './fields.js';

const budgetPeriod = z.enum(BUDGET_PERIODS).describe('total, or per UTC day or month');
const keyName = z.string().min(1).max(100);
const keyBudget = z.object({ amount: usd, period: budgetPeriod.optional().describe('total (the default), day or month; days and months in UTC') }).strict();

/**
 * The bodies of key create and update, shared by the admin API (/admin/v1/...) and the customer
 * API (/api/v1/keys; decision 1907): one schema, one reading into what `Accounts` takes.
 */
export const keyBodies = {
  create: z
    .object({
      name: keyName.optional().describe('Defaults to "key N"'),
      scopes: z
        .array(z.string())
        .optional()
        .describe(`Any of ${SCOPES.join(', ')}; none: every scope`),
      models: z.array(z.string()).optional().describe('Model ids or aliases the key may use; none: every model'),
      expiresAt: isoTime.nullable().optional(),
      budget: keyBudget.nullable().optional(),
    })
    .strict(),
  update: z
    .object({
      name: keyName.optional(),
      expiresAt: isoTime.nullable().optional().describe('null removes the expiry'),
      budget: z
        .object({ amount: usd.optional(), period: budgetPeriod.optional() })
        .strict()
        .nullable()
        .optional()
        .describe("null removes the budget; a missing amount or period keeps the key's current one"),
    })
    .strict(),
};

/** A key create body, checked, as `Accounts.createKey` takes it. */
export function readNewKey(body: unknown) {
  const b = parseWith(keyBodies.create, body, '');
  const budget = b.budget && { micros: money(b.budget.amount)!, period: b.budget.period ?? 'total' };
  return { ...b, expiresAt: time(b.expiresAt), budget };
}

/** A key update body, checked, as `Accounts.updateKey` takes it. */
export function readKeyChanges(body: unknown) {
  const b = parseWith(keyBodies.update, body, '');
  const budget = b.budget && { micros: money(b.budget.amount), period: b.budget.period };
  return { name: b.name, expiresAt: time(b.expiresAt), budget };
}
