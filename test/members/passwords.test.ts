import { describe, expect, it } from 'vitest';
import { HASH_PARAMS, hashPassword, verifyPassword } from '../../src/members/index.js';
import { checkPassword, needsRehash } from '../../src/members/passwords.js';

describe('password hashes', () => {
  it('are scrypt with their parameters and a fresh salt; only the right password matches', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(new RegExp(`^scrypt\\$${HASH_PARAMS.N}\\$${HASH_PARAMS.r}\\$${HASH_PARAMS.p}\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`));
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('keep working after the parameters are raised, and say when they are weaker than new ones', async () => {
    const weak = await hashPassword('correct horse battery', { N: 1 << 10, r: 8, p: 1 });
    expect(await verifyPassword('correct horse battery', weak)).toBe(true);
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash(await hashPassword('x'.repeat(12)))).toBe(false);
  });

  it('never match a malformed stored hash', async () => {
    for (const bad of ['', 'plain', 'scrypt$1$8$1$AAAA$BBBB', 'bcrypt$2$8$1$AAAA$BBBB', 'scrypt$16384$8$1$AAAA$short']) {
      expect(await verifyPassword('anything at all', bad), bad).toBe(false);
    }
  });

  it('refuse passwords outside 10 to 200 characters, naming the field', () => {
    expect(() => checkPassword('short')).toThrow('password must be 10 to 200 characters (got 5)');
    expect(() => checkPassword('x'.repeat(201))).toThrow('password must be 10 to 200 characters (got 201)');
    expect(() => checkPassword(undefined)).toThrow('password is required');
    expect(checkPassword('ten chars!')).toBe('ten chars!');
  });
});
