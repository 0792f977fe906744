import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { MovableClock } from '../tasks/support.js';
import { hashPassword } from '../../src/members/index.js';
import { Invite, Member, PendingInvite, SessionAnswer, SessionRow } from '../../src/api/auth/operation.js';
import { asBrowser, signedIn } from './support.js';

const PASSWORD = 'correct horse battery';

describe.each(dialects())('sessions over time, stored hashes and documented answers on %s', (dialect) => {
  let s: TestServer;
  const clock = new MovableClock();
  beforeAll(async () => {
    s = await startServer(dialect, { SESSION_TTL_HOURS: '2', SIGNUP: 'open', RUN_ENGINE: 'false' }, undefined, { clock });
  }, 60_000);
  afterAll(async () => s?.close());

  it('a session ends after SESSION_TTL_HOURS (its cookie says so too)', async () => {
    const b = await signedIn(await s.call('POST', '/api/v1/auth/signup', { body: { email: 'old@example.com', password: PASSWORD } }));
    expect(b.setCookie).toContain('Max-Age=7200;');
    const as = asBrowser(s, b);
    clock.advance(2 * 3600_000 - 60_000);
    expect((await as('GET', '/api/v1/user/balance')).status).toBe(200);
    clock.advance(61_000);
    const r = await as('GET', '/api/v1/user/balance');
    expect(r.status).toBe(401);
    expect(r.body.msg).toBe('this session has expired: sign in again');
  });

  it('re-hashes a password stored with weaker parameters at the next sign-in', async () => {
    const { account } = await s.services.accounts.create('weak', 0);
    const { member } = await s.services.members.create(account.id, 'weak@example.com', 'member', PASSWORD);
    const weak = await hashPassword(PASSWORD, { N: 1 << 10, r: 8, p: 1 });
    await s.services.database.tx((trx) => trx.updateTable('members').set({ password_hash: weak }).where('id', '=', member.id).execute());
    await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'weak@example.com', password: PASSWORD } }));
    const row = await s.services.database.db.selectFrom('members').select('password_hash').where('id', '=', member.id).executeTakeFirstOrThrow();
    expect(row.password_hash).not.toBe(weak);
    expect(row.password_hash.startsWith('scrypt$32768$8$1$')).toBe(true);
    await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email: 'weak@example.com', password: PASSWORD } }));
  });

  it('answers exactly what the OpenAPI document says', async () => {
    const strict = (schema: z.ZodObject, value: unknown) => schema.strict().parse(value);
    const up = await s.call('POST', '/api/v1/auth/signup', { body: { email: 'doc@example.com', password: PASSWORD } });
    strict(SessionAnswer.extend({ apiKey: z.string() }), up.body.data);
    const b = await signedIn(up);
    const as = asBrowser(s, b);
    strict(SessionAnswer, (await as('GET', '/api/v1/auth/session')).body.data);
    (await as('GET', '/api/v1/auth/sessions')).body.data.forEach((x: unknown) => strict(SessionRow, x));
    (await as('GET', '/api/v1/auth/members')).body.data.forEach((x: unknown) => strict(Member, x));
    const inv = (await as('POST', '/api/v1/auth/members/invite', { body: { email: 'doc2@example.com', role: 'owner' } })).body.data;
    strict(Invite, inv);
    const pending = (await as('GET', '/api/v1/auth/invites')).body.data;
    expect(pending).toHaveLength(1);
    strict(PendingInvite, pending[0]);
    expect(inv.emailed).toBe(false); // no SMTP here: the owner passes the link on
    const token = new URL(inv.url).hash.replace('#token=', '');
    const joined = await signedIn(await s.call('POST', '/api/v1/auth/invites/accept', { body: { token, password: PASSWORD } }));
    expect(joined.data.role).toBe('owner');
  });
});
