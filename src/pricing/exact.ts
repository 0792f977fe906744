import { exactDecimal, type Decimal } from '../catalog/index.js';

/**
 * Exact money arithmetic for prices: seconds are exact decimals (the calculator accepts
 * fractional seconds), rates are integer micro-USD, and the product is rounded UP to
 * 0.001 USD (1000 micro-USD) after multiplying (DECISIONS §3). BigInt, never floats.
 */

const MILLI_USD = 1000n;

/** The exact decimal of a number of seconds. */
export function seconds(value: number): Decimal {
  const d = exactDecimal(value);
  if (!d || d.digits < 0n) throw new Error(`seconds must be a finite non-negative number (got ${value})`);
  return d;
}

/** a + b, exactly. */
export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  const lift = (x: Decimal) => x.digits * 10n ** BigInt(scale - x.scale);
  return { digits: lift(a) + lift(b), scale };
}

/** The decimal as a JS number (for response fields that are numbers). */
export function toNumber(d: Decimal): number {
  return Number(d.digits) / 10 ** d.scale;
}

/** rate × quantity, rounded up to a whole 0.001 USD, in micro-USD. */
export function priceMicros(rateMicros: number, quantity: Decimal): number {
  const raw = BigInt(rateMicros) * quantity.digits; // micro-USD × 10^scale
  const step = MILLI_USD * 10n ** BigInt(quantity.scale);
  const steps = (raw + step - 1n) / step;
  return Number(steps * MILLI_USD);
}
