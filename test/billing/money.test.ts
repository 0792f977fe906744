import { describe, expect, it } from 'vitest';
import { formatUsd, parseUsd, toRub } from '../../src/billing/index.js';

describe('money', () => {
  it('parses USD text and numbers exactly into micro-USD', () => {
    expect(parseUsd('10')).toBe(10_000_000);
    expect(parseUsd('2.5')).toBe(2_500_000);
    expect(parseUsd('0.000001')).toBe(1);
    expect(parseUsd(0.1 + 0.2)).toBe(300_000);
    expect(parseUsd(12.34)).toBe(12_340_000);
    for (const bad of ['-1', '1.0000001', 'abc', '', '1e3', null, undefined, Number.NaN, -3, '1,5']) expect(parseUsd(bad)).toBeNull();
  });

  it('formats with a fixed number of digits, toward zero', () => {
    expect(formatUsd(12_340_000, 4)).toBe('12.3400');
    expect(formatUsd(1_405_000, 3)).toBe('1.405');
    expect(formatUsd(99, 4)).toBe('0.0000');
    expect(formatUsd(-1_500_000, 6)).toBe('-1.500000');
    expect(formatUsd(0, 4)).toBe('0.0000');
  });

  it('converts to RUB rounded half up to kopecks', () => {
    expect(toRub(1_405_000, 90)).toBe(126.45);
    expect(toRub(10_000_000, 90)).toBe(900);
    expect(toRub(5_000, 91.5)).toBe(0.46); // 0.4575 -> 0.46
    expect(toRub(1, 90)).toBe(0);
    expect(toRub(12_345_678_901, 97.1234)).toBe(1_199_054.31);
  });
});
