import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Errors } from '../errors.js';
import { hashPool } from './hash-pool.js';

/** scrypt cost of new hashes: N=2^15, r=8, p=1 (32 MiB, tens of ms). Each hash names its own, so raising these only affects new ones. */
export const HASH_PARAMS = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

/** scrypt on the hashing pool's own threads (hash-pool.ts): never on libuv's pool that file I/O waits on. */
function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; allow that and a margin above Node's 32 MiB default.
  return hashPool().derive({ password: password.normalize('NFC'), salt, keyBytes: KEY_BYTES, ...params, maxmem: 128 * params.N * params.r + 8 * 1024 * 1024 });
}

/** The stored form of a new password: `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string, params: { N: number; r: number; p: number } = HASH_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `password` matches `stored`; the comparison takes the same time wherever the bytes differ. A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (!(N > 1 && r > 0 && p > 0) || expected.length !== KEY_BYTES) return false;
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N, r, p });
  return timingSafeEqual(key, expected);
}

/** True when a stored hash was made with weaker parameters than new ones get (it is re-hashed at the next sign-in). */
export function needsRehash(stored: string): boolean {
  const [, N, r, p] = stored.split('$').map(Number);
  return N! < HASH_PARAMS.N || r! < HASH_PARAMS.r || p! < HASH_PARAMS.p;
}

let dummy: Promise<string> | undefined;
/** A hash of a random password, checked when the email is unknown: a sign-in takes as long whether or not the member exists. */
export function dummyHash(): Promise<string> {
  // A failed one (the pool closed by a stop while it ran) is made again by the next caller, not kept.
  dummy ??= hashPassword(randomBytes(16).toString('hex')).catch((e: unknown) => {
    dummy = undefined;
    throw e;
  });
  return dummy;
}

/** Refuses a password that is too short or too long, naming the field and the bounds. */
export function checkPassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string') throw Errors.missingField(field, `a password of ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw Errors.invalid(`${field} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (got ${length})`);
  }
  return password;
}

/** A password for a member the operator creates without one: 20 characters of base64url (120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}
