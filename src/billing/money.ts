/** Money is integer micro-USD everywhere inside GenGate (1 USD = 1,000,000). */
export const MICROS_PER_USD = 1_000_000;

const USD_TEXT = /^(\d{1,9})(?:\.(\d{1,6}))?$/;

/** Parses a USD amount given as text or number ("12.34", 5) into micro-USD exactly; null if not a plain non-negative amount. */
export function parseUsd(value: unknown): number | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return null;
    text = value.toFixed(6).replace(/\.?0+$/, '');
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return null;
  }
  const m = USD_TEXT.exec(text);
  if (!m) return null;
  const whole = Number(m[1]);
  const frac = Number((m[2] ?? '').padEnd(6, '0'));
  return whole * MICROS_PER_USD + frac;
}

/** Parses a signed USD amount ("+1.5", "-2", -2, 3): micro-USD, negative for a debit; null if not a plain amount. */
export function parseSignedUsd(value: unknown): number | null {
  if (typeof value === 'number') return value < 0 ? negate(parseUsd(-value)) : parseUsd(value);
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.startsWith('-')) return negate(parseUsd(text.slice(1)));
  return parseUsd(text.startsWith('+') ? text.slice(1) : text);
}

const negate = (micros: number | null) => (micros === null ? null : -micros);

/** Formats micro-USD as decimal text with `digits` fractional digits, rounding toward zero. */
export function formatUsd(micros: number, digits: 3 | 4 | 6): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const frac = String(abs % MICROS_PER_USD)
    .padStart(6, '0')
    .slice(0, digits);
  return `${sign}${whole}.${frac}`;
}

/** Micro-USD as a plain number of USD (for fields the spec types as numbers). */
export function usdNumber(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** Converts micro-USD to RUB at `rate` RUB per USD, rounded half up to kopecks, using exact integer arithmetic. */
export function toRub(micros: number, rate: number): number {
  const rateE6 = BigInt(Math.round(rate * 1_000_000));
  const scaled = BigInt(micros) * rateE6; // RUB * 1e12
  const kopecksTimes1e10 = scaled; // kopecks = RUB*100 = scaled / 1e10
  const divisor = 10_000_000_000n;
  const negative = kopecksTimes1e10 < 0n;
  const abs = negative ? -kopecksTimes1e10 : kopecksTimes1e10;
  const kopecks = (abs + divisor / 2n) / divisor;
  return ((negative ? -1 : 1) * Number(kopecks)) / 100;
}
