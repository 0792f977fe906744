import { describe, expect, it } from 'vitest';
import { randomId, timeOrderedId } from '../src/ids.js';

describe('randomId', () => {
  it('gives URL-safe ids of the asked length that never repeat, across pool refills', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => randomId('tk_', i % 7 === 0 ? 9 : 16));
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, id] of ids.entries()) expect(id).toMatch(i % 7 === 0 ? /^tk_[A-Za-z0-9_-]{12}$/ : /^tk_[A-Za-z0-9_-]{22}$/);
    expect(randomId('big_', 5000)).toHaveLength(4 + Math.ceil((5000 * 4) / 3));
  });

  it('spreads its bytes evenly (no zeroed or reused pool)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) for (const ch of randomId('', 16).slice(0, 21)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    // 42,000 characters over 64 symbols: about 656 each.
    expect(counts.size).toBe(64);
    for (const n of counts.values()) expect(n).toBeGreaterThan(450);
  });
});

describe('timeOrderedId', () => {
  it('starts with the time in 8 base-36 digits, so ids sort by time in any collation, and keeps 128 random bits', () => {
    const t = Date.UTC(2026, 10, 25, 12);
    const ids = [t - 86_400_000, t - 1, t, t, t + 1, t + 3_600_000].map((at) => timeOrderedId('tk_', at));
    for (const id of ids) expect(id).toMatch(/^tk_[0-9a-z]{8}[A-Za-z0-9_-]{22}$/);
    expect(ids[2]!.slice(3, 11)).toBe(t.toString(36));
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = ids.map((id) => id.slice(0, 11));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(timeOrderedId('tk_', 0).slice(3, 11)).toBe('00000000');
  });
});
