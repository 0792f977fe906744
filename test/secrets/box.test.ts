import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_FILE, SecretBox, SecretKeyMissing, loadSecretKeys } from '../../src/secrets/index.js';

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'gengate-secrets-'));
  dirs.push(d);
  return path.join(d, 'data');
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('secrets at rest', () => {
  it('seals with AES-GCM so the stored text shows nothing of the secret, and opens it again', () => {
    const box = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'k'.repeat(40), DATA_DIR: scratch() }));
    const sealed = box.seal('whsec_top-secret');
    expect(sealed).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    expect(sealed).not.toContain('top-secret');
    expect(box.seal('whsec_top-secret')).not.toBe(sealed); // a fresh IV every time
    expect(box.open(sealed)).toBe('whsec_top-secret');
    expect(box.open('whsec_stored_before_sealing')).toBe('whsec_stored_before_sealing');
  }, 240_000);

  it('refuses tampered text', () => {
    const box = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'k'.repeat(40), DATA_DIR: scratch() }));
    const sealed = box.seal('whsec_x');
    const parts = sealed.split(':');
    parts[4] = Buffer.from('whsec_y').toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
  }, 240_000);

  it('rotates: the previous key still opens, stale() says what to seal again, an unknown key is named', () => {
    const dir = scratch();
    const old = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'old'.repeat(12), DATA_DIR: dir }));
    const sealedOld = old.seal('whsec_a');
    const rotated = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'new'.repeat(12), GENGATE_SECRET_KEY_PREVIOUS: 'old'.repeat(12), DATA_DIR: dir }));
    expect(rotated.open(sealedOld)).toBe('whsec_a');
    expect(rotated.stale(sealedOld)).toBe(true);
    expect(rotated.stale('whsec_plain')).toBe(true);
    expect(rotated.stale(rotated.seal('whsec_a'))).toBe(false);
    const without = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'new'.repeat(12), DATA_DIR: dir }));
    expect(() => without.open(sealedOld)).toThrow(SecretKeyMissing);
    expect(() => without.open(sealedOld)).toThrow(new RegExp(`key ${old.keyId}`));
  }, 240_000);

  it('without GENGATE_SECRET_KEY makes an owner-only key file in DATA_DIR once and keeps using it', () => {
    const dir = scratch();
    const first = new SecretBox(loadSecretKeys({ DATA_DIR: dir }));
    const file = path.join(dir, KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const again = new SecretBox(loadSecretKeys({ DATA_DIR: dir }));
    expect(again.keyId).toBe(first.keyId);
    expect(again.open(first.seal('whsec_b'))).toBe('whsec_b');
    expect(readFileSync(file, 'utf8').trim()).toHaveLength(44);
  }, 240_000);

  it('moving from the key file to GENGATE_SECRET_KEY: the file still opens what it sealed', () => {
    const dir = scratch();
    const fromFile = new SecretBox(loadSecretKeys({ DATA_DIR: dir }));
    const sealed = fromFile.seal('whsec_c');
    const fromEnv = new SecretBox(loadSecretKeys({ GENGATE_SECRET_KEY: 'env'.repeat(12), DATA_DIR: dir }));
    expect(fromEnv.keyId).not.toBe(fromFile.keyId);
    expect(fromEnv.open(sealed)).toBe('whsec_c');
    expect(fromEnv.stale(sealed)).toBe(true);
  }, 240_000);

  it('puts a key file made readable to others back to owner-only, and refuses one that holds no key', () => {
    const dir = scratch();
    loadSecretKeys({ DATA_DIR: dir });
    const file = path.join(dir, KEY_FILE);
    chmodSync(file, 0o644);
    loadSecretKeys({ DATA_DIR: dir });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'not a key\n');
    expect(() => loadSecretKeys({ DATA_DIR: dir })).toThrow(/does not hold a key/);
  });
});
