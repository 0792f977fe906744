import { createHash, randomBytes } from 'node:crypto';

/** A secret token for a cookie, an invite or a reset link: 256 random bits in base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens are stored and looked up only by this hash. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,63}$/;

/** A valid email address, trimmed and lower-cased (the form it is stored and looked up in). */
export function normalEmail(value: string): string | null {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : null;
}
