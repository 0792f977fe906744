import { LRUCache } from 'lru-cache';

/** Keys and values are anything but null and undefined (lru-cache's own constraint). */
export type Present = NonNullable<unknown>;

/** A bounded in-memory map: past its bound the least recently used entry goes first. */
export type BoundedCache<K extends Present, V extends Present> = LRUCache<K, V>;

/**
 * The one way to keep things in memory by key (statements, answers, signers, keys, views): a
 * maintained LRU (lru-cache) bounded by entry count, or by a total size when `sizeOf` is given
 * (then `max` is that total). Hand-rolled maps with their own eviction drifted apart (some cleared
 * everything at the bound, some dropped the oldest insert, one counted bytes) and each needed its
 * own tests.
 */
export function boundedCache<K extends Present, V extends Present>(max: number, opts: { sizeOf?: (value: V, key: K) => number } = {}): BoundedCache<K, V> {
  if (opts.sizeOf) return new LRUCache<K, V>({ maxSize: max, sizeCalculation: (v, k) => Math.max(1, opts.sizeOf!(v, k)) });
  return new LRUCache<K, V>({ max });
}

/** The cached value of `key`, made by `make` (and kept) when missing. */
export function cached<K extends Present, V extends Present>(cache: BoundedCache<K, V>, key: K, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
}
