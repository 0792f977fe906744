import { createHash } from 'node:crypto';

/** A small deterministic PRNG (mulberry32): the same seed always draws the same numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed to render with: the caller's seed when it is a non-negative integer, otherwise one derived from the
 * prompt. Models use -1 for "random"; deriving it instead keeps a request's render the same, so renders cache.
 */
export function effectiveSeed(seed: number | undefined, prompt = ''): number {
  if (seed !== undefined && Number.isInteger(seed) && seed >= 0) return seed % 4294967296;
  return createHash('sha256').update(prompt).digest().readUInt32BE(0);
}

/** A stable cache key for a render: the same kind and parameters always give the same hex string. */
export function renderKey(kind: string, params: object): string {
  const canonical = JSON.stringify(params, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return createHash('sha256').update(`${kind}\n${canonical}`).digest('hex');
}
