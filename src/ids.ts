import { randomFillSync } from 'node:crypto';

/**
 * Random bytes are drawn from the system 4 KB at a time: one getrandom call per id cost more than
 * the rest of making a task id (about 5 % of createTask's CPU). Bytes are used once and never
 * handed out twice; the pool is refilled when it cannot serve a request whole.
 */
const POOL = Buffer.alloc(4096);
let offset = POOL.length;

function take(bytes: number): Buffer {
  if (bytes > POOL.length) return randomFillSync(Buffer.alloc(bytes));
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += bytes;
  return POOL.subarray(offset - bytes, offset);
}

/** An unguessable, URL-safe id: prefix + base64url of `bytes` random bytes (16 bytes = 128 bits). */
export function randomId(prefix: string, bytes = 16): string {
  return prefix + take(bytes).toString('base64url');
}

/**
 * An unguessable id that sorts by time: prefix + `at` (epoch ms) as 8 base-36 digits (lowercase, so
 * every collation orders them alike; 8 digits last until 2059) + base64url of `bytes` random bytes.
 * Ids made close together sit next to each other in every index keyed by them, so a new row
 * touches the index's last pages instead of a random page each (what a create commits, decision 0023).
 */
export function timeOrderedId(prefix: string, at: number, bytes = 16): string {
  return prefix + Math.max(0, Math.floor(at)).toString(36).padStart(8, '0') + take(bytes).toString('base64url');
}
