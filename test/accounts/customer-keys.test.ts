import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { asBrowser, signedIn, type Browser } from '../members/support.js';
import { AccountAnswer } from '../../src/api/index.js';
import { ReplySchemas as S } from '../../src/api/index.js';

const PASSWORD = 'correct horse battery';
/** 0.060 USD. */
const IMAGE = { model: 'nano-banana-2', input: { prompt: 'a red fox', resolution: '2K' } };
const strict = (schema: z.ZodObject, value: unknown) => schema.strict().parse(value);

describe.each(dialects())('customer key self-service (/api/v1/keys, /api/v1/account) on %s', (dialect) => {
  let s: TestServer;
  let owner: Browser;
  let accountId: string;
  /** The account's first key (made at sign-up; no scopes list, no budget). */
  let firstKey: string;
  let as: ReturnType<typeof asBrowser>;
  const withKey = (key: string) => (method: string, path: string, body?: unknown) => s.call(method, path, { key, body });

  beforeAll(async () => {
    // A long key cache: a revocation must still answer 401 at the next request of this process.
    s = await startServer(dialect, { SIGNUP: 'open', RUN_ENGINE: 'false', AUTH_CACHE_MS: '60000' });
    const up = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'owner@example.com', password: PASSWORD, accountName: 'acme' } });
    owner = await signedIn(up);
    accountId = up.body.data.account.id;
    firstKey = up.body.data.apiKey;
    as = asBrowser(s, owner);
    await s.services.accounts.topup(accountId, 10_000_000, 'test money');
  }, 60_000);
  afterAll(async () => s?.close());

  it("a member's session creates a key (secret once), the key works, the list shows its spend, a budget change and a revocation", async () => {
    const made = await as('POST', '/api/v1/keys', {
      body: { name: 'ci runner', scopes: ['tasks:write', 'tasks:read'], budget: { amount: '1', period: 'day' } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    strict(S.KeyCreated, made.body.data);
    strict(S.ApiKey, made.body.data.key);
    const { key, apiKey } = made.body.data;
    expect(apiKey).toMatch(/^gg_[A-Za-z0-9_-]{32}$/);
    expect(key).toMatchObject({ name: 'ci runner', accountId, scopes: ['tasks:write', 'tasks:read'], budget: { amount: '1.0000', period: 'day' } });
    expect(key.createdBy).toBe(owner.data.member.id);

    // The key works at once, by plain HTTP, within its scopes.
    const task = await s.call('POST', '/api/v1/jobs/createTask', { key: apiKey, body: IMAGE });
    expect(task.status, JSON.stringify(task.body)).toBe(200);
    expect((await s.call('GET', '/api/v1/user/balance', { key: apiKey })).status).toBe(403);

    const list = await as('GET', '/api/v1/keys');
    expect(list.status).toBe(200);
    list.body.data.forEach((k: unknown) => strict(S.ApiKey, k));
    expect(JSON.stringify(list.body)).not.toContain(apiKey); // never the secret
    const listed = list.body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed).toMatchObject({ spent: '0.0600', spentMicros: 60_000, remaining: '0.9400', lastUsedAt: expect.any(String), revokedAt: null });

    const updated = await as('POST', `/api/v1/keys/${key.id}`, { body: { budget: { amount: '0.10' }, name: 'ci' } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'ci', budget: { amount: '0.1000', period: 'day' }, spent: '0.0600', remaining: '0.0400' });
    expect((await s.call('POST', '/api/v1/jobs/createTask', { key: apiKey, body: IMAGE })).status).toBe(402);

    const revoked = await as('POST', `/api/v1/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revokedAt).toEqual(expect.any(String));
    const after = await s.call('GET', '/api/v1/jobs/recordInfo?taskId=' + task.body.data.taskId, { key: apiKey });
    expect(after.status).toBe(401);
    expect(after.body.msg).toBe('this API key has been revoked');
  });

  it('a change without the CSRF token is 403 and makes nothing; a GET needs none', async () => {
    const before = (await as('GET', '/api/v1/keys', { csrf: false })).body.data.length;
    const r = await as('POST', '/api/v1/keys', { body: { name: 'no csrf' }, csrf: false });
    expect(r.status).toBe(403);
    expect(r.body.msg).toContain('missing x-csrf-token header');
    const wrong = await as('POST', '/api/v1/keys', { body: { name: 'wrong csrf' }, csrf: 'not-the-token' });
    expect(wrong.status).toBe(403);
    expect((await as('GET', '/api/v1/keys', { csrf: false })).body.data.length).toBe(before);
  });

  it("another account's key id is 404, as an unknown one", async () => {
    const other = await s.account(1, 'other');
    const theirs = (await s.services.accounts.listKeys(other.id))[0]!;
    for (const path of [`/api/v1/keys/${theirs.id}`, `/api/v1/keys/${theirs.id}/revoke`]) {
      const r = await as('POST', path, { body: path.endsWith('revoke') ? undefined : { name: 'mine now' } });
      expect(r.status).toBe(404);
      expect(r.body.msg).toBe(`no API key "${theirs.id}"`);
    }
    expect((await as('POST', '/api/v1/keys/key_nope/revoke')).status).toBe(404);
    expect((await s.call('GET', '/api/v1/user/balance', { key: other.key })).status).toBe(200); // untouched
    expect((await withKey(firstKey)('POST', `/api/v1/keys/${theirs.id}/revoke`)).status).toBe(404);
  });

  it('a member manages the keys they made; an owner every key', async () => {
    await s.services.members.create(accountId, 'member@example.com', 'member', PASSWORD);
    const m = await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'member@example.com', password: PASSWORD } }));
    const asMember = asBrowser(s, m);
    const own = (await asMember('POST', '/api/v1/keys', { body: { name: 'mine' } })).body.data.key;
    const ownersKey = (await as('POST', '/api/v1/keys', { body: { name: "owner's" } })).body.data.key;
    expect((await asMember('GET', '/api/v1/keys')).body.data.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([own.id, ownersKey.id]));
    const refused = await asMember('POST', `/api/v1/keys/${ownersKey.id}/revoke`);
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('a member manages only the keys they made');
    expect((await asMember('POST', `/api/v1/keys/${ownersKey.id}`, { body: { name: 'x' } })).status).toBe(403);
    expect((await asMember('POST', `/api/v1/keys/${own.id}`, { body: { name: 'still mine' } })).body.data.name).toBe('still mine');
    expect((await as('POST', `/api/v1/keys/${own.id}/revoke`)).status).toBe(200); // the owner manages it too
    const acct = await asMember('GET', '/api/v1/account');
    expect(acct.body.data).toMatchObject({ id: accountId, role: 'member', keyId: null });
  });

  it('a key lists keys and makes keys no more powerful than itself; revoking it revokes them', async () => {
    const key = withKey(firstKey);
    expect((await key('GET', '/api/v1/keys')).status).toBe(200);
    // A key with a scopes list: what it makes gets its list unless given a part of it.
    const scoped = (await key('POST', '/api/v1/keys', { name: 'scoped', scopes: ['keys:write', 'keys:read', 'tasks:read'], models: ['nano-banana-2'] })).body
      .data;
    expect(scoped.key.createdBy).toBe((await s.services.accounts.listKeys(accountId)).find((k) => k.name === 'key 1')!.id);
    const byScoped = withKey(scoped.apiKey);
    const child = await byScoped('POST', '/api/v1/keys', { name: 'child' });
    expect(child.status, JSON.stringify(child.body)).toBe(200);
    expect(child.body.data.key).toMatchObject({ scopes: ['keys:write', 'keys:read', 'tasks:read'], models: ['nano-banana-2'], createdBy: scoped.key.id });
    const wider = await byScoped('POST', '/api/v1/keys', { scopes: ['tasks:write'] });
    expect(wider.status).toBe(403);
    expect(wider.body.msg).toBe('scopes: this API key cannot give the scope tasks:write it lacks itself (it has: keys:write, keys:read, tasks:read)');
    const otherModel = await byScoped('POST', '/api/v1/keys', { models: ['seedream-flash'] });
    expect(otherModel.status).toBe(403);
    expect(otherModel.body.msg).toContain('models: this API key cannot give the model "seedream-flash"');
    // A key manages only what it made (and what those made).
    expect((await byScoped('POST', `/api/v1/keys/${scoped.key.id}`, { name: 'self' })).status).toBe(403);
    expect((await key('POST', `/api/v1/keys/${child.body.data.key.id}`, { name: 'grandchild renamed' })).status).toBe(200);

    // Revoking the scoped key revokes its child too, at once.
    expect((await as('POST', `/api/v1/keys/${scoped.key.id}/revoke`)).status).toBe(200);
    expect((await s.call('GET', '/api/v1/keys', { key: child.body.data.apiKey })).status).toBe(401);
    expect((await s.call('GET', '/api/v1/keys', { key: scoped.apiKey })).status).toBe(401);
  });

  it('a key with an expiry makes keys that expire no later; a key with a budget makes none; a key without the scope lists none', async () => {
    const expiring = (await as('POST', '/api/v1/keys', { body: { name: 'expiring', expiresAt: '2099-01-01', scopes: ['keys:write', 'keys:read'] } })).body.data;
    const byExpiring = withKey(expiring.apiKey);
    const inherits = await byExpiring('POST', '/api/v1/keys', {});
    expect(inherits.body.data.key.expiresAt).toBe('2099-01-01T00:00:00.000Z');
    const later = await byExpiring('POST', '/api/v1/keys', { expiresAt: '2099-06-01' });
    expect(later.status).toBe(403);
    expect(later.body.msg).toBe(
      'expiresAt: a key made by this API key must expire no later than it does, at 2099-01-01T00:00:00.000Z (got 2099-06-01T00:00:00.000Z)',
    );
    const never = await byExpiring('POST', `/api/v1/keys/${inherits.body.data.key.id}`, { expiresAt: null });
    expect(never.status).toBe(403);

    const budgeted = (await as('POST', '/api/v1/keys', { body: { budget: { amount: '5' } } })).body.data;
    const r = await withKey(budgeted.apiKey)('POST', '/api/v1/keys', { name: 'escape' });
    expect(r.status).toBe(403);
    expect(r.body.msg).toContain('this API key has a budget, so it cannot make or change keys');

    const readOnly = (await as('POST', '/api/v1/keys', { body: { scopes: ['tasks:read'] } })).body.data;
    const list = await withKey(readOnly.apiKey)('GET', '/api/v1/keys');
    expect(list.status).toBe(403);
    expect(list.body.msg).toBe('this API key lacks the scope keys:read (it has: tasks:read)');
  });

  it('a session opened with an API key acts as that key', async () => {
    const scoped = (await as('POST', '/api/v1/keys', { body: { scopes: ['keys:read', 'keys:write', 'balance:read'] } })).body.data;
    const b = await signedIn(await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: scoped.apiKey } }));
    const asKey = asBrowser(s, b);
    const made = await asKey('POST', '/api/v1/keys', { body: { name: 'from a key session' } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data.key).toMatchObject({ createdBy: scoped.key.id, scopes: ['keys:read', 'keys:write', 'balance:read'] });
    expect((await asKey('POST', '/api/v1/keys/key_x/revoke')).status).toBe(404);
    expect((await asKey('GET', '/api/v1/account')).body.data).toMatchObject({ role: null, keyId: scoped.key.id });
  });

  it('refusals name the field and the allowed values, and change nothing', async () => {
    const before = (await as('GET', '/api/v1/keys')).body.data.length;
    const cases: Array<[unknown, number, RegExp]> = [
      [
        { scopes: ['tasks:everything'] },
        400,
        /^scopes: unknown scope "tasks:everything"; allowed: tasks:write, tasks:read, files:write, balance:read, billing, keys:read, keys:write$/,
      ],
      [{ budget: { amount: '5', period: 'week' } }, 400, /budget\.period.*"total".*"day".*"month"/],
      [{ budget: { amount: 'lots' } }, 400, /budget\.amount.*must be a USD amount such as "10" or "2\.50"/],
      [{ expiresAt: 'tomorrow' }, 400, /expiresAt.*must be an ISO 8601 time with its zone/],
      [{ expiresAt: '2020-01-01' }, 400, /^expiresAt must be a time in the future/],
      [{ models: ['no-such-model'] }, 400, /^models: unknown model "no-such-model"; see GET \/api\/v1\/models/],
      [{ name: '' }, 400, /name/],
      [{ colour: 'red' }, 400, /colour/],
    ];
    for (const [body, status, msg] of cases) {
      const r = await as('POST', '/api/v1/keys', { body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.msg, JSON.stringify(body)).toMatch(msg);
    }
    const key = (await as('GET', '/api/v1/keys')).body.data[0];
    const bad = await as('POST', `/api/v1/keys/${key.id}`, { body: { budget: { period: 'year' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/budget\.period.*"total".*"day".*"month"/);
    expect((await as('GET', '/api/v1/keys')).body.data.length).toBe(before);
  });

  it('GET /api/v1/account answers the account and the caller, to a session and to a key', async () => {
    const bySession = await as('GET', '/api/v1/account');
    expect(bySession.status).toBe(200);
    strict(AccountAnswer, bySession.body.data);
    expect(bySession.body.data).toMatchObject({ id: accountId, name: 'acme', status: 'active', dialect: 'gengate', role: 'owner', keyId: null });
    expect(bySession.body.data.limits).toEqual({ write: null, read: null });
    expect(bySession.body.data).not.toHaveProperty('webhookSecret');
    const byKey = await s.call('GET', '/api/v1/account', { key: firstKey });
    expect(byKey.body.data).toMatchObject({ id: accountId, role: null, keyId: expect.stringMatching(/^key_/) });
    expect(byKey.body.data.balance).toBe(bySession.body.data.balance);
    expect(byKey.headers.get('ratelimit-limit')).toBe('1000000'); // counted like the other keyed reads
  });
});
