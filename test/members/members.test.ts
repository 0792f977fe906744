import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { gengate } from '../helpers/cli.js';
import { asBrowser, linkToken, signedIn, startSmtp, waitFor } from './support.js';

const PASSWORD = 'correct horse battery';
const TASK = { model: 'suno-v6', input: { prompt: 'a tune' } };

describe.each(dialects())('members and sign-in on %s', (dialect) => {
  let s: TestServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    s = await startServer(dialect, {
      SIGNUP: 'open',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'GenGate <noreply@gengate.test>',
      ADMIN_TOKEN: 'admin-token-0123456789',
      RUN_ENGINE: 'false',
      // Every test signs in from 127.0.0.1: the limits have their own tests below.
      SIGNIN_LIMIT_PER_ADDRESS: '1000',
    });
  }, 240_000);
  afterAll(async () => {
    await s?.close();
    await smtp?.close();
  });

  const signUp = async (email: string, accountName = 'acme') =>
    signedIn(await s.call('POST', '/api/v1/auth/signup', { body: { email, password: PASSWORD, accountName } }));
  const signIn = async (email: string, password = PASSWORD) => signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email, password } }));

  it('signs up a new account with its owner: an HttpOnly, SameSite=Lax cookie, a CSRF token, a zero balance and a first key', async () => {
    const b = await signUp('Ada@Example.com');
    expect(b.setCookie).toMatch(/^gg_session=[A-Za-z0-9_-]{40,}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/);
    expect(b.setCookie).not.toContain('Secure'); // plain http and PUBLIC_BASE_URL http
    expect(b.data).toMatchObject({ member: { email: 'ada@example.com', role: 'owner' }, role: 'owner', readOnly: false, scopes: null });
    expect(b.data.apiKey).toMatch(/^gg_/);
    const as = asBrowser(s, b);
    const me = await as('GET', '/api/v1/auth/session');
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.body.data).toMatchObject({ account: { id: b.data.account.id, name: 'acme' }, csrfToken: b.csrf });
    expect((await as('GET', '/api/v1/user/balance')).body.data.balance).toBe('0.0000');
    // The first key works for the same account.
    expect((await s.call('GET', '/api/v1/user/balance', { key: b.data.apiKey })).status).toBe(200);
    // The same email cannot sign up twice.
    const again = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'ada@example.com', password: PASSWORD } });
    expect(again.status).toBe(400);
    expect(again.body.msg).toContain('already a member');
    // A short password is refused naming the field and the bounds.
    const short = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'short@example.com', password: 'x' } });
    expect(short.status).toBe(400);
    expect(short.body.msg).toBe('password must be 10 to 200 characters (got 1)');
  });

  it('signs in and out; a wrong password and an unknown email get the same 401', async () => {
    await signUp('bea@example.com', 'bea co');
    const wrong = await s.call('POST', '/api/v1/auth/signin', { body: { email: 'bea@example.com', password: 'not the password' } });
    const unknown = await s.call('POST', '/api/v1/auth/signin', { body: { email: 'nobody@example.com', password: PASSWORD } });
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body.msg).toBe(unknown.body.msg);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const b = await signIn('BEA@example.com');
    const as = asBrowser(s, b);
    expect((await as('GET', '/api/v1/auth/session')).status).toBe(200);
    // Signing out needs the CSRF token too.
    expect((await as('POST', '/api/v1/auth/signout', { csrf: false })).status).toBe(403);
    const out = await as('POST', '/api/v1/auth/signout');
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^gg_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax/);
    const after = await as('GET', '/api/v1/auth/session');
    expect(after.status).toBe(401);
    expect(after.body.msg).toContain('revoked');
    // No cookie at all.
    const none = await s.call('GET', '/api/v1/auth/session');
    expect(none.status).toBe(401);
    expect(none.body.msg).toContain('not signed in');
  });

  it('a session calls jobs/createTask with the CSRF token, and is refused without it (nothing charged)', async () => {
    const b = await signUp('cat@example.com', 'cat co');
    await s.services.accounts.topup(b.data.account.id, 5_000_000, 'test');
    const as = asBrowser(s, b);
    const missing = await as('POST', '/api/v1/jobs/createTask', { body: TASK, csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.body.msg).toContain('missing x-csrf-token header');
    const wrong = await as('POST', '/api/v1/jobs/createTask', { body: TASK, csrf: 'not-the-token' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.msg).toContain('wrong x-csrf-token header');
    expect((await as('GET', '/api/v1/user/balance')).body.data.balance).toBe('5.0000');
    const made = await as('POST', '/api/v1/jobs/createTask', { body: TASK });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const taskId = made.body.data.taskId as string;
    // Reads need no CSRF token; the task belongs to the session's account.
    const read = await as('GET', `/api/v1/jobs/recordInfo?taskId=${taskId}`, { csrf: false });
    expect(read.status).toBe(200);
    expect(read.body.data.taskId).toBe(taskId);
    expect(Number((await as('GET', '/api/v1/user/balance')).body.data.balance)).toBeLessThan(5);
    // A bearer key wins over a cookie and needs no CSRF token.
    const withKey = await s.call('POST', '/api/v1/jobs/createTask', { key: b.data.apiKey, body: TASK, headers: { cookie: b.cookie } });
    expect(withKey.status).toBe(200);
  });

  it('an API key opens a read-only session unless it has a scopes list; its revocation ends the session', async () => {
    const b = await signUp('dan@example.com', 'dan co');
    await s.services.accounts.topup(b.data.account.id, 5_000_000, 'test');
    const ro = await signedIn(await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: b.data.apiKey } }));
    expect(ro.data).toMatchObject({ member: null, role: null, readOnly: true, scopes: ['tasks:read', 'balance:read'] });
    const asRo = asBrowser(s, ro);
    expect((await asRo('GET', '/api/v1/user/balance')).status).toBe(200);
    const refused = await asRo('POST', '/api/v1/jobs/createTask', { body: TASK });
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('lacks the scope tasks:write');
    // A key-opened session manages no members.
    expect((await asRo('GET', '/api/v1/auth/sessions')).status).toBe(403);
    const scoped = await s.services.accounts.createKey(b.data.account.id, { scopes: ['tasks:write', 'tasks:read'] });
    const rw = await signedIn(await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: scoped.apiKey } }));
    expect(rw.data).toMatchObject({ readOnly: false, scopes: ['tasks:write', 'tasks:read'] });
    const asRw = asBrowser(s, rw);
    expect((await asRw('POST', '/api/v1/jobs/createTask', { body: TASK })).status).toBe(200);
    expect((await asRw('GET', '/api/v1/user/balance')).status).toBe(403); // not among its scopes
    await s.services.accounts.revokeKey(scoped.key.id);
    const gone = await asRw('GET', '/api/v1/auth/session');
    expect(gone.status).toBe(401);
    expect(gone.body.msg).toContain('API key that opened this session has been revoked');
    expect((await s.call('POST', '/api/v1/auth/signin/key', { body: { apiKey: 'gg_nope' } })).status).toBe(401);
  });

  it('lists and revokes sessions: a revoked session is refused at once, also when the CLI (another process) revokes it', async () => {
    await signUp('eve@example.com', 'eve co');
    const one = await signIn('eve@example.com');
    const two = await signIn('eve@example.com');
    const asOne = asBrowser(s, one);
    const asTwo = asBrowser(s, two);
    const list = await asOne('GET', '/api/v1/auth/sessions');
    expect(list.body.data).toHaveLength(3);
    expect(list.body.data.filter((x: any) => x.current).map((x: any) => x.id)).toEqual([one.data.sessionId]);
    expect((await asTwo('GET', '/api/v1/user/balance')).status).toBe(200);
    const revoked = await asOne('POST', `/api/v1/auth/sessions/${two.data.sessionId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expect((await asTwo('GET', '/api/v1/user/balance')).status).toBe(401);
    expect((await asOne('GET', '/api/v1/user/balance')).status).toBe(200);
    // Another member's session is not found.
    const other = await signUp('eve2@example.com', 'eve2 co');
    expect((await asOne('POST', `/api/v1/auth/sessions/${other.data.sessionId}/revoke`)).status).toBe(404);
    // The CLI, its own process on the same database: the very next request is refused.
    const cli = await gengate(['session', 'revoke', '--member', 'eve@example.com', '--json'], { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ revoked: 2 });
    const after = await asOne('GET', '/api/v1/user/balance');
    expect(after.status).toBe(401);
    expect(after.body.msg).toContain('revoked');
  }, 240_000);

  it('emails a one-time reset link through SMTP; the link works once and ends every session', async () => {
    await signUp('fay@example.com', 'fay co');
    const before = await signIn('fay@example.com');
    const sent = smtp.mails.length;
    const r = await s.call('POST', '/api/v1/auth/password/forgot', { body: { email: 'FAY@example.com' } });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ code: 202, msg: 'success', data: null });
    const mail = await waitFor(() => smtp.mails.slice(sent).find((m) => m.to === 'fay@example.com'));
    expect(mail.text).toContain('From: GenGate <noreply@gengate.test>');
    const { url, token } = linkToken(mail.text);
    expect(url.startsWith(`${s.config.PUBLIC_BASE_URL}/reset-password#token=`)).toBe(true);
    const NEW = 'a brand new password';
    const reset = await s.call('POST', '/api/v1/auth/password/reset', { body: { token, password: NEW } });
    expect(reset.status).toBe(200);
    expect(reset.body.data).toEqual({ email: 'fay@example.com', sessionsRevoked: 2 });
    const twice = await s.call('POST', '/api/v1/auth/password/reset', { body: { token, password: 'yet another password' } });
    expect(twice.status).toBe(400);
    expect(twice.body.msg).toContain('unknown, used or expired');
    expect((await asBrowser(s, before)('GET', '/api/v1/auth/session')).status).toBe(401);
    expect((await s.call('POST', '/api/v1/auth/signin', { body: { email: 'fay@example.com', password: PASSWORD } })).status).toBe(401);
    await signIn('fay@example.com', NEW);
    // An unknown email gets the same 202 and no mail.
    const count = smtp.mails.length;
    expect((await s.call('POST', '/api/v1/auth/password/forgot', { body: { email: 'ghost@example.com' } })).status).toBe(202);
    await new Promise((res) => setTimeout(res, 300));
    expect(smtp.mails.length).toBe(count);
  });

  it('owners invite (emailed link, once), change roles and remove members; a member sees the members but cannot manage them', async () => {
    const owner = await signUp('gus@example.com', 'gus co');
    const asOwner = asBrowser(s, owner);
    const sent = smtp.mails.length;
    const inv = await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'Hal@example.com' } });
    expect(inv.status, JSON.stringify(inv.body)).toBe(200);
    expect(inv.body.data).toMatchObject({ invite: { email: 'hal@example.com', role: 'member', accountId: owner.data.account.id }, emailed: true });
    const mail = await waitFor(() => smtp.mails.slice(sent).find((m) => m.to === 'hal@example.com'));
    const { token } = linkToken(mail.text);
    expect(inv.body.data.url).toContain(token);
    // The invite needs the CSRF token like every change.
    expect((await asOwner('POST', '/api/v1/auth/members/invite', { body: { email: 'x@example.com' }, csrf: false })).status).toBe(403);
    const hal = await signedIn(await s.call('POST', '/api/v1/auth/invites/accept', { body: { token, password: PASSWORD } }));
    expect(hal.data).toMatchObject({ account: { id: owner.data.account.id }, member: { email: 'hal@example.com', role: 'member' } });
    const used = await s.call('POST', '/api/v1/auth/invites/accept', { body: { token, password: PASSWORD } });
    expect(used.status).toBe(400);
    const asHal = asBrowser(s, hal);
    // A member may look at the account's members (the console's read-only list), not change them.
    const seen = await asHal('GET', '/api/v1/auth/members');
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((m: any) => m.email)).toEqual(['gus@example.com', 'hal@example.com']);
    for (const [method, path, body] of [
      ['POST', '/api/v1/auth/members/invite', { email: 'ivy@example.com' }],
      ['POST', `/api/v1/auth/members/${hal.data.member.id}/role`, { role: 'owner' }],
      ['POST', `/api/v1/auth/members/${owner.data.member.id}/remove`, undefined],
    ] as const) {
      const r = await asHal(method, path, { body });
      expect(r.status, path).toBe(403);
      expect(r.body.msg).toContain('only an owner');
    }
    const list = await asOwner('GET', '/api/v1/auth/members');
    expect(list.body.data.map((m: any) => [m.email, m.role])).toEqual([
      ['gus@example.com', 'owner'],
      ['hal@example.com', 'member'],
    ]);
    // The last owner can neither leave nor step down.
    const last = await asOwner('POST', `/api/v1/auth/members/${owner.data.member.id}/role`, { body: { role: 'member' } });
    expect(last.status).toBe(400);
    expect(last.body.msg).toContain('last owner');
    const badRole = await asOwner('POST', `/api/v1/auth/members/${hal.data.member.id}/role`, { body: { role: 'operator' } });
    expect(badRole.status).toBe(400);
    expect(badRole.body.msg).toContain('role');
    const promoted = await asOwner('POST', `/api/v1/auth/members/${hal.data.member.id}/role`, { body: { role: 'owner' } });
    expect(promoted.body.data.role).toBe('owner');
    expect((await asHal('GET', '/api/v1/auth/members')).status).toBe(200);
    await asOwner('POST', `/api/v1/auth/members/${hal.data.member.id}/role`, { body: { role: 'member' } });
    // Another account's member is not found.
    const stranger = await signUp('ike@example.com', 'ike co');
    expect((await asOwner('POST', `/api/v1/auth/members/${stranger.data.member.id}/remove`)).status).toBe(404);
    const removed = await asOwner('POST', `/api/v1/auth/members/${hal.data.member.id}/remove`);
    expect(removed.status).toBe(200);
    expect((await asHal('GET', '/api/v1/auth/session')).status).toBe(401);
    expect((await s.call('POST', '/api/v1/auth/signin', { body: { email: 'hal@example.com', password: PASSWORD } })).status).toBe(401);
  });

  it('an operator session calls the admin API (changes with the CSRF token); other sessions are refused', async () => {
    const { account } = await s.services.accounts.create('ops', 0);
    await s.services.members.create(account.id, 'ops@example.com', 'operator', PASSWORD);
    const op = await signIn('ops@example.com');
    const asOp = asBrowser(s, op);
    expect((await asOp('GET', '/admin/v1/accounts')).status).toBe(200);
    expect((await asOp('POST', `/admin/v1/accounts/${account.id}/topup`, { body: { amount: '1' }, csrf: false })).status).toBe(403);
    const topped = await asOp('POST', `/admin/v1/accounts/${account.id}/topup`, { body: { amount: '1' } });
    expect(topped.body.data.balance).toBe('1.0000');
    const owner = await signUp('jo@example.com', 'jo co');
    const refused = await asBrowser(s, owner)('GET', '/admin/v1/accounts');
    expect(refused.status).toBe(403);
    expect(refused.body.msg).toContain('operator');
    // ADMIN_TOKEN keeps working.
    expect((await s.call('GET', '/admin/v1/accounts', { headers: { authorization: 'Bearer admin-token-0123456789' } })).status).toBe(200);
  });

  it('the CLI creates members (a generated password shown once) and resets passwords', async () => {
    const { account } = await s.services.accounts.create('cli co', 0);
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const made = await gengate(['member', 'create', '--account', account.id, '--email', 'kim@example.com', '--role', 'owner', '--json'], env);
    expect(made.code, made.stderr).toBe(0);
    const { member, password } = JSON.parse(made.stdout);
    expect(member).toMatchObject({ email: 'kim@example.com', role: 'owner', accountId: account.id });
    const b = await signIn('kim@example.com', password);
    const reset = await gengate(['member', 'reset-password', 'kim@example.com', '--json'], env);
    expect(reset.code, reset.stderr).toBe(0);
    const r = JSON.parse(reset.stdout);
    expect(r.sessionsRevoked).toBe(1);
    expect((await asBrowser(s, b)('GET', '/api/v1/auth/session')).status).toBe(401);
    await signIn('kim@example.com', r.password);
    const list = JSON.parse((await gengate(['member', 'list', '--account', account.id, '--json'], env)).stdout);
    expect(list.members.map((m: any) => m.email)).toEqual(['kim@example.com']);
    const bad = await gengate(['member', 'create', '--account', account.id, '--email', 'nope', '--json'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('email must be an email address');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});

describe.each(dialects())('sign-in limits and settings on %s', (dialect) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(dialect, {
      TRUST_PROXY: 'true',
      SIGNIN_LIMIT_PER_EMAIL: '3',
      SIGNIN_LIMIT_PER_ADDRESS: '5',
      PUBLIC_BASE_URL: 'https://gengate.example.com',
      RUN_ENGINE: 'false',
    });
    const { account } = await s.services.accounts.create('lim', 0);
    await s.services.members.create(account.id, 'lee@example.com', 'owner', PASSWORD);
  }, 240_000);
  afterAll(async () => s?.close());

  const attempt = (email: string, password: string, from: string) =>
    s.call('POST', '/api/v1/auth/signin', { body: { email, password }, headers: { 'x-forwarded-for': from } });

  it('throttles guesses per email from one address (the right password too, until the window passes)', async () => {
    const first = Date.now();
    for (let i = 0; i < 3; i++) expect((await attempt('lee@example.com', 'wrong password!', '10.0.0.1')).status).toBe(401);
    const r = await attempt('lee@example.com', PASSWORD, '10.0.0.1');
    expect(r.status).toBe(429);
    // The window opened at the first attempt: what is left of its 900 s, whole seconds, however long the four attempts took.
    const retry = Number(r.headers.get('retry-after'));
    expect(retry).toBeLessThanOrEqual(900);
    expect(retry).toBeGreaterThanOrEqual(900 - Math.ceil((Date.now() - first) / 1000));
    expect(r.body.msg).toBe(`too many sign-in attempts for this email from this address: at most 3 every 900 s; retry in ${retry} s`);
  });

  it('a stranger guessing cannot lock a member out: the member signs in from their own address meanwhile (issue 39 finding 11)', async () => {
    const { account } = await s.services.accounts.create('own', 0);
    await s.services.members.create(account.id, 'own@example.com', 'owner', PASSWORD);
    for (let i = 0; i < 3; i++) expect((await attempt('own@example.com', 'wrong password!', '10.6.6.6')).status).toBe(401);
    expect((await attempt('own@example.com', PASSWORD, '10.6.6.6')).status).toBe(429);
    expect((await attempt('own@example.com', PASSWORD, '10.7.7.7')).status).toBe(200);
  });

  it('throttles attempts per client address, whatever email they name', async () => {
    for (let i = 0; i < 5; i++) expect((await attempt(`u${i}@example.com`, 'wrong password!', '10.1.1.1')).status).toBe(401);
    const r = await attempt('other@example.com', 'wrong password!', '10.1.1.1');
    expect(r.status).toBe(429);
    expect(r.body.msg).toContain('from this address');
    expect((await attempt('other@example.com', 'wrong password!', '10.1.1.2')).status).toBe(401);
  });

  it('sets Secure when PUBLIC_BASE_URL is https; SIGNUP=off refuses sign-up; without SMTP a reset is refused', async () => {
    const { account } = await s.services.accounts.create('sec', 0);
    await s.services.members.create(account.id, 'sec@example.com', 'member', PASSWORD);
    const b = await signedIn(await attempt('sec@example.com', PASSWORD, '10.2.2.2'));
    expect(b.setCookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    const up = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'new@example.com', password: PASSWORD } });
    expect(up.status).toBe(403);
    expect(up.body.msg).toContain('SIGNUP=off');
    const forgot = await s.call('POST', '/api/v1/auth/password/forgot', { body: { email: 'sec@example.com' }, headers: { 'x-forwarded-for': '10.3.3.3' } });
    expect(forgot.status).toBe(403);
    expect(forgot.body.msg).toContain('SMTP_URL is not set');
  });
});
