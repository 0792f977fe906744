/**
 * Reading numbers and booleans that clients send as text (DECISIONS §11: `duration: 5` and
 * `"5"` both work), and exact decimals so prices never go through binary floating point.
 */

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** A finite number from a number or numeric text (surrounding spaces allowed); null otherwise. */
export function numberFrom(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text.length === 0 || text.length > 40 || !NUMERIC.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** A boolean from true/false or the text "true"/"false" (any case); null otherwise. */
export function boolFrom(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : null;
}

/** An exact decimal: value = digits / 10^scale. */
export interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

/**
 * The exact decimal a number or numeric text denotes. A number is taken at its shortest
 * round-trip text (what JSON shows), so 0.1 is exactly one tenth, not the nearest double.
 */
export function exactDecimal(value: number | string): Decimal | null {
  const text = (typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim()).toLowerCase();
  if (text.length === 0 || text.length > 40 || !NUMERIC.test(text)) return null;
  const [mantissa = '', exponentText] = text.split('e');
  const negative = mantissa.startsWith('-');
  const unsigned = mantissa.replace(/^[+-]/, '');
  const [whole = '', frac = ''] = unsigned.split('.');
  let digits = BigInt(`${whole}${frac}` || '0');
  let scale = frac.length - Number(exponentText ?? 0);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: negative ? -digits : digits, scale };
}

/** Rounds half up to a whole number (2.5 → 3), the rule for seconds of media (DECISIONS §5). */
export function roundHalfUp(value: number): number {
  return Math.floor(value + 0.5);
}

/** Counts characters as code points, so an emoji is one character; cheap when the text is clearly short. */
export function characterCount(text: string, limit: number): number {
  if (text.length <= limit) return text.length; // code points never outnumber UTF-16 units
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
