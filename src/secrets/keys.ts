import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { secretKey, type SecretKey, type SecretKeys } from './box.js';

/** The key file made in DATA_DIR when GENGATE_SECRET_KEY is not set. */
export const KEY_FILE = 'secret.key';

/** The settings that choose the keys. */
export interface KeySettings {
  GENGATE_SECRET_KEY?: string | undefined;
  GENGATE_SECRET_KEY_PREVIOUS?: string | undefined;
  DATA_DIR: string;
}

/**
 * The keys in force: GENGATE_SECRET_KEY when set, else the key file in DATA_DIR (made owner-only
 * on first start; two processes starting at once agree, since only one can create it). Older keys
 * from GENGATE_SECRET_KEY_PREVIOUS (comma-separated), and the key file when GENGATE_SECRET_KEY
 * replaced it, still open what they sealed.
 */
export function loadSecretKeys(settings: KeySettings): SecretKeys {
  const current = settings.GENGATE_SECRET_KEY ? secretKey(settings.GENGATE_SECRET_KEY) : keyFromFile(settings.DATA_DIR);
  const older = (settings.GENGATE_SECRET_KEY_PREVIOUS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => secretKey(s));
  // Moving from the key file to GENGATE_SECRET_KEY: the file's key still opens what it sealed.
  if (settings.GENGATE_SECRET_KEY && existsSync(path.join(settings.DATA_DIR, KEY_FILE))) older.push(keyFromFile(settings.DATA_DIR));
  const previous = older.filter((k) => k.id !== current.id);
  return { current, previous };
}

function keyFromFile(dataDir: string): SecretKey {
  const file = path.join(dataDir, KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Written whole to a file of its own, then linked into place: a process starting at the same
  // moment either finds the complete key or makes the link first; never half a key.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    rmSync(draft, { force: true });
  }
  // A key file someone made readable to others is put back to owner-only.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const text = readFileSync(file, 'utf8').trim();
  if (Buffer.from(text, 'base64').length !== 32)
    throw new Error(`${file} does not hold a key (32 bytes in base64); remove it to make a new one only if nothing was sealed with it`);
  return secretKey(Buffer.from(text, 'base64'));
}
