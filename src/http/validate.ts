import type { z } from 'zod';
import { Errors, shown } from '../errors.js';

/** Parses `value` with a zod schema; a refusal names the field, what is allowed and what was sent. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = [where, ...issue.path.map(String)].filter(Boolean).join('.');
  const received = issue.path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
  if (received === undefined && issue.code === 'invalid_type') throw Errors.missingField(field);
  throw Errors.invalid(`${field}: ${issue.message} (got ${shown(received)})`);
}
