import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { asBrowser, linkToken, signedIn, startSmtp, waitFor } from './support.js';

/** Issue 39 finding 5: a reset link works once, and any password change spends every link made before it. */
const PASSWORD = 'correct horse battery';

describe.each(dialects())('reset links on %s', (dialect) => {
  let s: TestServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    s = await startServer(dialect, {
      SMTP_URL: smtp.url,
      RUN_ENGINE: 'false',
      SIGNIN_LIMIT_PER_ADDRESS: '1000',
      SIGNIN_LIMIT_PER_EMAIL: '1000',
    });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await smtp?.close();
  });

  const member = async (email: string) => {
    const { account } = await s.services.accounts.create(email, 0);
    await s.services.members.create(account.id, email, 'owner', PASSWORD);
  };
  /** Asks for a reset link and reads its token from the mail. */
  const link = async (email: string): Promise<string> => {
    const sent = smtp.mails.length;
    expect((await s.call('POST', '/api/v1/auth/password/forgot', { body: { email } })).status).toBe(202);
    return linkToken((await waitFor(() => smtp.mails.slice(sent).find((m) => m.to === email))).text).token;
  };
  const reset = (token: string, password: string) => s.call('POST', '/api/v1/auth/password/reset', { body: { token, password } });

  it('a reset by a newer link spends the older one', async () => {
    await member('ann@example.com');
    const older = await link('ann@example.com');
    const newer = await link('ann@example.com');
    expect((await reset(newer, 'the newer password')).status).toBe(200);
    const r = await reset(older, 'the older password');
    expect(r.status).toBe(400);
    expect(r.body.msg).toContain('unknown, used or expired');
    expect((await reset(newer, 'once more please')).status).toBe(400);
    expect((await s.call('POST', '/api/v1/auth/signin', { body: { email: 'ann@example.com', password: 'the newer password' } })).status).toBe(200);
  }, 120_000);

  it('a reset by the operator (CLI) spends every link', async () => {
    await member('bob@example.com');
    const token = await link('bob@example.com');
    await s.services.members.setPassword('bob@example.com', 'set by the operator');
    expect((await reset(token, 'the attacker password')).status).toBe(400);
    expect((await s.call('POST', '/api/v1/auth/signin', { body: { email: 'bob@example.com', password: 'set by the operator' } })).status).toBe(200);
  }, 120_000);

  it('the member changing their password spends every link and ends their other sessions', async () => {
    await member('cay@example.com');
    const other = await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'cay@example.com', password: PASSWORD } }));
    const token = await link('cay@example.com');
    const me = asBrowser(s, await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'cay@example.com', password: PASSWORD } })));
    const wrong = await me('POST', '/api/v1/auth/password/change', { body: { currentPassword: 'not my password', password: 'my new password' } });
    expect(wrong.status).toBe(401);
    const changed = await me('POST', '/api/v1/auth/password/change', { body: { currentPassword: PASSWORD, password: 'my new password' } });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ sessionsRevoked: 1 });
    expect((await me('GET', '/api/v1/auth/session')).status).toBe(200);
    expect((await asBrowser(s, other)('GET', '/api/v1/auth/session')).status).toBe(401);
    expect((await reset(token, 'the attacker password')).status).toBe(400);
    expect((await s.call('POST', '/api/v1/auth/signin', { body: { email: 'cay@example.com', password: 'my new password' } })).status).toBe(200);
  }, 120_000);
});
