import { randomBytes } from 'node:crypto';

/** An unguessable, URL-safe id: prefix + base64url of `bytes` random bytes (16 bytes = 128 bits). */
export function randomId(prefix: string, bytes = 16): string {
  return prefix + randomBytes(bytes).toString('base64url');
}
