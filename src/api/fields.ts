import { z } from 'zod';
import { parseIsoTime } from '../accounts/index.js';
import { parseUsd } from '../billing/index.js';

/** Request fields the admin and the customer bodies share, each written once. */

export const usd = z
  .union([z.string(), z.number()])
  .refine((v) => parseUsd(v) !== null, 'must be a USD amount such as "10" or "2.50" (at most 6 decimals)')
  .describe('USD amount, e.g. "10" or "2.50" (at most 6 decimals)');

export const isoTime = z
  .string()
  .refine((v) => parseIsoTime(v) !== null, 'must be an ISO 8601 time with its zone, such as "2026-12-31T23:59:59Z", or a date')
  .describe('ISO 8601 time with its zone, e.g. "2026-12-31T23:59:59Z", or a date (midnight UTC)');

/** An ISO time already checked by `isoTime`, as epoch ms (null and undefined pass through). */
export const time = (v: string | null | undefined) => (v == null ? v : parseIsoTime(v)!);
/** A USD amount already checked by `usd`, in micro-USD (undefined passes through). */
export const money = (v: string | number | undefined) => (v === undefined ? undefined : parseUsd(v)!);
