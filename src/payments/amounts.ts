import { formatUsd, parseUsd } from '../billing/index.js';
import type { Config } from '../config.js';
import { Errors, shown } from '../errors.js';

/** A card payment is in whole cents: 1 cent is 10,000 micro-USD. */
export const MICROS_PER_CENT = 10_000;

/** The top-up amounts of the settings, in micro-USD. */
export interface TopupAmounts {
  presets: number[];
  min: number;
  max: number;
}

export function topupAmounts(config: Pick<Config, 'TOPUP_PRESETS' | 'TOPUP_MIN' | 'TOPUP_MAX'>): TopupAmounts {
  const micros = (v: string | number) => parseUsd(typeof v === 'number' ? v.toFixed(2) : v)!;
  return { presets: config.TOPUP_PRESETS.split(',').map(micros), min: micros(config.TOPUP_MIN), max: micros(config.TOPUP_MAX) };
}

const usd = (micros: number) =>
  formatUsd(micros, 4)
    .replace(/\.?0+$/, '')
    .replace(/\.(\d)$/, '.$10');

/** Reads `amount` of a top-up request: USD in whole cents from TOPUP_MIN to TOPUP_MAX; the refusal names the field, the range and what was sent. */
export function readTopupAmount(value: unknown, amounts: TopupAmounts): number {
  if (value === undefined || value === null) throw Errors.missingField('amount', `a USD amount from ${usd(amounts.min)} to ${usd(amounts.max)}`);
  const micros = parseUsd(value);
  const range = `from ${usd(amounts.min)} to ${usd(amounts.max)}`;
  if (micros === null || micros % MICROS_PER_CENT !== 0) {
    throw Errors.invalid(`amount must be a USD amount in whole cents ${range}, e.g. "25" or "12.50" (got ${shown(value)})`);
  }
  if (micros < amounts.min || micros > amounts.max) throw Errors.invalid(`amount must be ${range} USD (got ${shown(value)})`);
  return micros;
}

/** USD text for pages and messages: "10", "12.5" shown as "12.50". */
export function usdText(micros: number): string {
  return usd(micros);
}
