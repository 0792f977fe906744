import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { asBrowser, signedIn, startSmtp, waitFor } from './support.js';

/**
 * Issue 39 findings 6 and 15: invites are limited per account and per address, their subject is
 * fixed (nothing an owner types), and the answer does not tell whether an email is a member.
 */
const PASSWORD = 'correct horse battery';

describe.each(dialects())('invites on %s', (dialect) => {
  let s: TestServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    s = await startServer(dialect, {
      SMTP_URL: smtp.url,
      RUN_ENGINE: 'false',
      TRUST_PROXY: 'true',
      SIGNIN_LIMIT_PER_ADDRESS: '1000',
      SIGNIN_LIMIT_PER_EMAIL: '1000',
      INVITE_LIMIT_PER_ACCOUNT: '3',
      INVITE_LIMIT_PER_ADDRESS: '5',
    });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await smtp?.close();
  });

  const owner = async (email: string, accountName: string, from: string) => {
    const { account } = await s.services.accounts.create(accountName, 0);
    await s.services.members.create(account.id, email, 'owner', PASSWORD);
    const b = await signedIn(await s.call('POST', '/api/v1/auth/signin', { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': from } }));
    const as = asBrowser(s, b);
    return (email: string) => as('POST', '/api/v1/auth/members/invite', { body: { email }, headers: { 'x-forwarded-for': from } });
  };

  it('limits invites per account, with a fixed subject', async () => {
    const invite = await owner('spam@example.com', 'BUY CHEAP PILLS at pills.example', '10.0.0.1');
    const sent = smtp.mails.length;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await invite(`victim${i}@outside.example`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const r = await invite('victim9@outside.example');
    expect(r.body.msg).toMatch(/^too many invites for this account: at most 3 every 24 hours; retry in \d+ s$/);
    const mails = await waitFor(() => (smtp.mails.length - sent >= 3 ? smtp.mails.slice(sent) : undefined));
    expect(mails).toHaveLength(3);
    for (const m of mails) {
      expect(m.text).toContain('Subject: You are invited to an account on GenGate');
      expect(/^Subject:.*$/m.exec(m.text)![0]).not.toContain('PILLS');
    }
  }, 120_000);

  it('limits invites per address, across accounts', async () => {
    const a = await owner('a@example.com', 'a', '10.0.0.2');
    const b = await owner('b@example.com', 'b', '10.0.0.2');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await a(`x${i}@outside.example`)).status);
    for (let i = 0; i < 2; i++) statuses.push((await b(`y${i}@outside.example`)).status);
    const over = await b('y2@outside.example');
    expect([...statuses, over.status]).toEqual([200, 200, 200, 200, 200, 429]);
    expect(over.body.msg).toContain('too many invites from this address');
  }, 120_000);

  it('answers the same whether or not the email is already a member', async () => {
    const invite = await owner('who@example.com', 'who', '10.0.0.3');
    await owner('taken@example.com', 'elsewhere', '10.0.0.4');
    const known = await invite('taken@example.com');
    const unknown = await invite('free@example.com');
    expect([known.status, unknown.status]).toEqual([200, 200]);
    const shape = (r: typeof known) => ({ ...r.body, data: { ...r.body.data, url: typeof r.body.data.url, invite: Object.keys(r.body.data.invite).sort() } });
    expect(shape(known)).toEqual(shape(unknown));
  }, 120_000);
});
