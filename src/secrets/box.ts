import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** What sealed text starts with; anything else is a secret stored before sealing existed (read as is). */
const PREFIX = 'sealed:v1:';

/** A 32-byte key and its id (the first 8 hex digits of its hash), which sealed text names. */
export interface SecretKey {
  id: string;
  bytes: Buffer;
}

/** The key that seals, and older keys that may still open what they sealed (rotation). */
export interface SecretKeys {
  current: SecretKey;
  previous: SecretKey[];
}

/** A key from any text of at least 32 characters (GENGATE_SECRET_KEY) or from 32 random bytes (the key file). */
export function secretKey(material: string | Buffer): SecretKey {
  const bytes = createHash('sha256').update('gengate-secret-key:').update(material).digest();
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

/** Sealed text names a key this process does not have: the settings differ between processes. */
export class SecretKeyMissing extends Error {}

/**
 * Seals the secrets GenGate keeps in its database (webhook signing secrets, and any credential
 * stored later) with AES-256-GCM, so a copy of the database alone gives none of them away.
 * Sealed text is `sealed:v1:<key id>:<iv>:<ciphertext>:<tag>` (base64url parts).
 */
export class SecretBox {
  private readonly byId: Map<string, SecretKey>;

  constructor(private readonly keys: SecretKeys) {
    this.byId = new Map([keys.current, ...keys.previous].map((k) => [k.id, k]));
  }

  /** The id of the key that seals. */
  get keyId(): string {
    return this.keys.current.id;
  }

  /** Seals `plain` with the current key (a fresh random IV each time). */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.current.bytes, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${this.keys.current.id}:${iv.toString('base64url')}:${data.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
  }

  /** The plain text of `stored`: opened with the key it names, or as is when it was stored unsealed. */
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [id, iv, data, tag] = stored.slice(PREFIX.length).split(':');
    const key = this.byId.get(id ?? '');
    if (!key || !iv || data === undefined || !tag) {
      throw new SecretKeyMissing(
        `a stored secret was sealed with key ${id ?? '?'}, which this process does not have; every process needs the same GENGATE_SECRET_KEY (and the old one in GENGATE_SECRET_KEY_PREVIOUS while rotating)`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** `seal` as a short URL-safe token (the sealed parts joined by '.'): for links handed to clients. */
  sealToken(plain: string): string {
    return this.seal(plain).slice(PREFIX.length).replaceAll(':', '.');
  }

  /** The plain text of a `sealToken` token; null for anything else (made up, tampered, or sealed with a key this process lacks). */
  openToken(token: string): string | null {
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){3}$/.test(token)) return null;
    try {
      return this.open(PREFIX + token.replaceAll('.', ':'));
    } catch {
      return null;
    }
  }

  /** Whether `stored` should be sealed again: stored unsealed, or sealed with an older key. */
  stale(stored: string): boolean {
    return !stored.startsWith(`${PREFIX}${this.keys.current.id}:`);
  }
}
