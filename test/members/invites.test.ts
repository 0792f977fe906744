import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { MovableClock } from '../tasks/support.js';
import { asBrowser, signedIn } from './support.js';

const PASSWORD = 'correct horse battery';

/** Pending invites: every member of the account sees them (never their links), an owner withdraws one (the console's members page). */
describe.each(dialects())('pending invites on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(
      dialect,
      { SIGNUP: 'open', RUN_ENGINE: 'false', SIGNIN_LIMIT_PER_ADDRESS: '1000', SESSION_TTL_HOURS: '400' /* outlives an invite */ },
      undefined,
      { clock },
    );
  }, 60_000);
  afterAll(async () => s?.close());

  const signUp = async (email: string, accountName: string) =>
    signedIn(await s.call('POST', '/api/v1/auth/signup', { body: { email, password: PASSWORD, accountName } }));
  const tokenOf = (url: string) => new URL(url).hash.replace('#token=', '');

  it('lists the pending invites to every member, oldest first, without links; accepted and expired ones drop out', async () => {
    const owner = await signUp('lea@example.com', 'lea co');
    const asOwner = asBrowser(s, owner);
    const first = (await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'max@example.com' } })).body.data;
    clock.advance(1000);
    const second = (await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'noa@example.com', role: 'owner' } })).body.data;
    const listed = await asOwner('GET', '/api/v1/auth/invites');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((i: any) => [i.email, i.role])).toEqual([
      ['max@example.com', 'member'],
      ['noa@example.com', 'owner'],
    ]);
    expect(JSON.stringify(listed.body.data)).not.toContain(tokenOf(first.url));

    // Accepted: gone from the list; the new member (not an owner) sees the rest.
    const max = await signedIn(await s.call('POST', '/api/v1/auth/invites/accept', { body: { token: tokenOf(first.url), password: PASSWORD } }));
    const asMax = asBrowser(s, max);
    const seen = await asMax('GET', '/api/v1/auth/invites');
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((i: any) => i.id)).toEqual([second.invite.id]);
    // Another account sees none of them.
    const other = await signUp('oli@example.com', 'oli co');
    expect((await asBrowser(s, other)('GET', '/api/v1/auth/invites')).body.data).toEqual([]);

    // Expired (7 days): not listed, and it cannot be withdrawn any more.
    clock.advance(7 * 24 * 3600_000);
    expect((await asOwner('GET', '/api/v1/auth/invites')).body.data).toEqual([]);
    expect((await asOwner('POST', `/api/v1/auth/invites/${second.invite.id}/revoke`)).status).toBe(404);
  });

  it('an owner withdraws a pending invite: its link is refused; members, other accounts and key sessions cannot', async () => {
    const owner = await signUp('pia@example.com', 'pia co');
    const asOwner = asBrowser(s, owner);
    const inv = (await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'quinn@example.com' } })).body.data;
    const keep = (await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'rae@example.com' } })).body.data;
    const rae = await signedIn(await s.call('POST', '/api/v1/auth/invites/accept', { body: { token: tokenOf(keep.url), password: PASSWORD } }));

    // A member who is not an owner: 403 in words, nothing withdrawn.
    const byMember = await asBrowser(s, rae)('POST', `/api/v1/auth/invites/${inv.invite.id}/revoke`);
    expect(byMember.status).toBe(403);
    expect(byMember.body.msg).toContain('only an owner');
    // An owner of another account: not found, as an unknown id.
    const stranger = await signUp('sam@example.com', 'sam co');
    const byStranger = await asBrowser(s, stranger)('POST', `/api/v1/auth/invites/${inv.invite.id}/revoke`);
    expect(byStranger.status).toBe(404);
    expect(byStranger.body.error).toBe('not_found');
    // A session opened with an API key has no member.
    const keySession = await signedIn(await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: owner.data.apiKey } }));
    expect((await asBrowser(s, keySession)('GET', '/api/v1/auth/invites')).status).toBe(403);
    // Without the CSRF token: 403, nothing happens.
    expect((await asOwner('POST', `/api/v1/auth/invites/${inv.invite.id}/revoke`, { csrf: false })).status).toBe(403);
    expect((await asOwner('GET', '/api/v1/auth/invites')).body.data.map((i: any) => i.email)).toEqual(['quinn@example.com']);

    const revoked = await asOwner('POST', `/api/v1/auth/invites/${inv.invite.id}/revoke`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: inv.invite.id, email: 'quinn@example.com', role: 'member' });
    expect((await asOwner('GET', '/api/v1/auth/invites')).body.data).toEqual([]);
    const refused = await s.call('POST', '/api/v1/auth/invites/accept', { body: { token: tokenOf(inv.url), password: PASSWORD } });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toContain('unknown, used or expired');
    expect((await asOwner('POST', `/api/v1/auth/invites/${inv.invite.id}/revoke`)).status).toBe(404);
  });
});
