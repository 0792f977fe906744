import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { asBrowser, signedIn } from '../members/support.js';

/**
 * Issue 39 finding 4: a key never carries more than its maker's role allows, and the webhook secret
 * and the alert are an owner's, checked in one place (the scope check) for sessions and keys alike.
 */
const PASSWORD = 'correct horse battery';

describe.each(dialects())('roles applied to keys on %s', (dialect) => {
  let s: TestServer;
  let accountId: string;
  beforeAll(async () => {
    s = await startServer(dialect, { RUN_ENGINE: 'false', SIGNIN_LIMIT_PER_ADDRESS: '1000', SIGNIN_LIMIT_PER_EMAIL: '1000' });
    const { account } = await s.services.accounts.create('roles', 0);
    accountId = account.id;
    await s.services.members.create(accountId, 'olga@example.com', 'owner', PASSWORD);
    await s.services.members.create(accountId, 'otto@example.com', 'owner', PASSWORD);
    await s.services.members.create(accountId, 'max@example.com', 'member', PASSWORD);
  }, 60_000);
  afterAll(async () => s?.close());

  const browser = async (email: string) => asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email, password: PASSWORD } })));
  /** The three calls only an owner may make, as statuses. */
  const ownerCalls = async (call: (method: string, path: string, body?: unknown) => Promise<{ status: number }>) => [
    (await call('GET', '/api/v1/account/webhook-secret')).status,
    (await call('POST', '/api/v1/account/webhook-secret/rotate')).status,
    (await call('PUT', '/api/v1/account/alert', { level: '1', url: null, email: false })).status,
  ];
  const withKey = (key: string) => (method: string, path: string, body?: unknown) => s.call(method, path, { key, body });

  it("a member's session and every key a member makes lack billing; the refusal names the scope", async () => {
    const max = await browser('max@example.com');
    expect(await ownerCalls((m, p, body) => max(m, p, { body }))).toEqual([403, 403, 403]);
    const asked = await max('POST', '/api/v1/keys', { body: { name: 'sneaky', scopes: ['billing'] } });
    expect(asked.status).toBe(403);
    expect(asked.body.msg).toContain('cannot give the scope billing');
    // Left out, the scopes are the member's own list, never "every scope".
    const made = await max('POST', '/api/v1/keys', { body: { name: 'mine' } });
    expect(made.status).toBe(200);
    expect(made.body.data.key.scopes).not.toContain('billing');
    expect(made.body.data.key.scopes).toContain('tasks:write');
    const refused = await s.call('GET', '/api/v1/account/webhook-secret', { key: made.body.data.apiKey });
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('lacks the scope billing');
    expect(await ownerCalls(withKey(made.body.data.apiKey))).toEqual([403, 403, 403]);
    // A key made by that key cannot get it either.
    const child = await s.call('POST', '/api/v1/keys', { key: made.body.data.apiKey, body: { scopes: ['billing'] } });
    expect(child.status).toBe(403);
    // What a member may do still works with the key.
    expect((await s.call('GET', '/api/v1/user/balance', { key: made.body.data.apiKey })).status).toBe(200);
  }, 120_000);

  it('an owner and the keys an owner makes may', async () => {
    const olga = await browser('olga@example.com');
    expect(await ownerCalls((m, p, body) => olga(m, p, { body }))).toEqual([200, 200, 200]);
    const made = await olga('POST', '/api/v1/keys', { body: { name: 'billing key', scopes: ['billing'] } });
    expect(made.status).toBe(200);
    expect(await ownerCalls(withKey(made.body.data.apiKey))).toEqual([200, 200, 200]);
  }, 120_000);

  it("an owner made a member keeps no owner's scope through the keys they made", async () => {
    const otto = await browser('otto@example.com');
    const all = await otto('POST', '/api/v1/keys', { body: { name: 'all of it' } });
    expect(all.body.data.key.scopes).toBeNull();
    const grand = await s.call('POST', '/api/v1/keys', { key: all.body.data.apiKey, body: { name: 'grandchild', scopes: ['billing', 'tasks:read'] } });
    expect(grand.status).toBe(200);
    expect((await s.call('GET', '/api/v1/account/webhook-secret', { key: all.body.data.apiKey })).status).toBe(200);
    const olga = await browser('olga@example.com');
    const members = (await olga('GET', '/api/v1/auth/members')).body.data as Array<{ id: string; email: string }>;
    const ottoId = members.find((m) => m.email === 'otto@example.com')!.id;
    expect((await olga('POST', `/api/v1/auth/members/${ottoId}/role`, { body: { role: 'member' } })).status).toBe(200);
    expect(await ownerCalls(withKey(all.body.data.apiKey))).toEqual([403, 403, 403]);
    expect(await ownerCalls(withKey(grand.body.data.apiKey))).toEqual([403, 403, 403]);
    expect((await s.call('GET', '/api/v1/jobs/list', { key: grand.body.data.apiKey })).status).toBe(200);
    expect(await ownerCalls((m, p, body) => otto(m, p, { body }))).toEqual([403, 403, 403]);
  }, 120_000);
});
