import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { pageVisits, useConsoleBrowser, HAS_BROWSER } from './browser.js';

/**
 * The members page in Chromium (decision 2003): an owner invites (the link shown once), the invitee
 * accepts it in another browser and sees the list read-only, the owner changes the role and removes
 * the member, the last owner's refusal is shown in the API's words, and signing out another session
 * sends that browser to the sign-in page. A session opened with an API key is told who manages members.
 */
const PASSWORD = 'correct horse battery';

const chrome = useConsoleBrowser();

describe.skipIf(!HAS_BROWSER).each(dialects())('the members page in Chromium on %s', (dialect) => {
  let s: TestServer;
  const contexts: BrowserContext[] = [];
  let owner: Page;
  let account = { id: '', key: '' };
  const ownerEmail = `boss-${dialect}@example.com`;
  const newcomer = `hal-${dialect}@example.com`;
  const { snap, visit } = pageVisits(dialect, () => s.url, { settled: true });

  const browserPage = async () => {
    const ctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(ctx);
    return ctx.newPage();
  };
  const signIn = async (email: string) => {
    const p = await browserPage();
    await p.goto(`${s.url}/signin`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.locator('h1', { hasText: 'Home' }).waitFor();
    return p;
  };
  /** What the server says of the page's session (its cookie). */
  const sessionOf = async (p: Page) => {
    const cookie = (await p.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    return s.call('GET', '/api/v1/auth/session', { headers: { cookie } });
  };
  const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000 });
  const roleOf = async (email: string) => (await s.services.members.get(email)).role;
  const memberRow = (p: Page, email: string) => p.locator(`tr[data-member="${email}"]`);

  beforeAll(async () => {
    s = await startServerOnFreePort(dialect, { CONSOLE_DIR: chrome.consoleDir, RUN_ENGINE: 'false', FIRST_RUN_ACCOUNT: 'false' });
    account = await s.account(5, 'Studio M');
    await s.services.members.create(account.id, ownerEmail, 'owner', PASSWORD);
    owner = await signIn(ownerEmail);
  }, 60_000);
  afterAll(async () => {
    for (const ctx of contexts) await ctx.close();
    await s?.close();
  });

  it('serves the console page at /members', async () => {
    const r = await fetch(`${s.url}/members`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/html');
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('an owner invites a member (the link shown once); the invitee accepts it in another browser and sees the list read-only', async () => {
    await visit(owner, '/members', 'members-owner');
    await poll(() => memberRow(owner, ownerEmail).textContent()).toContain('you');

    await owner.getByLabel('Email').fill(newcomer);
    await owner.getByLabel('Role', { exact: true }).selectOption('member');
    await owner.getByRole('button', { name: 'Send the invite' }).click();
    const link = owner.getByTestId('invite-link');
    await poll(() => link.textContent()).toMatch(new RegExp(`^${s.url}/accept-invite#token=[A-Za-z0-9_-]{40,}$`));
    const url = (await link.textContent())!;
    expect(await owner.getByRole('status').filter({ hasText: 'invite link' }).textContent()).toContain(`The invite link for ${newcomer}`);
    await owner.getByRole('button', { name: 'Copy the link' }).waitFor();
    // The invite waits in the list, without its link.
    await poll(() => owner.locator(`tr[data-invite="${newcomer}"]`).textContent()).toContain('member');
    expect(await owner.locator('table.invites').textContent()).not.toContain(url.split('#token=')[1]!);
    await snap(owner, 'members');

    const hal = await browserPage();
    await hal.goto(url);
    await hal.getByLabel('Choose a password').fill(PASSWORD);
    await hal.getByRole('button', { name: 'Join the account' }).click();
    await hal.locator('h1', { hasText: 'Home' }).waitFor();
    expect((await sessionOf(hal)).body.data).toMatchObject({ account: { id: account.id }, member: { email: newcomer, role: 'member' } });
    await hal.getByRole('link', { name: 'Members' }).click();
    await hal.locator('h1', { hasText: 'Members' }).waitFor();
    await visit(hal, '/members', 'members-readonly');
    await poll(() => hal.locator('table.members tbody tr').count()).toBe(2);
    expect(await memberRow(hal, ownerEmail).textContent()).toContain('owner');
    expect(await memberRow(hal, newcomer).textContent()).toContain('member');
    // Read-only: no invite form, no role select, no remove button, no withdraw.
    expect(await hal.locator('form').count()).toBe(0);
    expect(await hal.locator('table.members select').count()).toBe(0);
    expect(await hal.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    expect(await hal.getByText('No invite is waiting to be accepted.').count()).toBe(1);
  }, 60_000);

  it('the owner changes the role; the last owner cannot step down (the refusal shown); the owner removes the member', async () => {
    await owner.goto(`${s.url}/members`);
    await memberRow(owner, newcomer).waitFor();
    await owner.getByLabel(`Role of ${newcomer}`).selectOption('owner');
    await poll(() => roleOf(newcomer)).toBe('owner');
    await owner.getByLabel(`Role of ${newcomer}`).selectOption('member');
    await poll(() => roleOf(newcomer)).toBe('member');

    await owner.getByLabel(`Role of ${ownerEmail}`).selectOption('member');
    const refusal = memberRow(owner, ownerEmail).getByRole('alert');
    await poll(() => refusal.textContent()).toBe(`Not changed: ${ownerEmail} is the last owner of account ${account.id}: make another member owner first`);
    expect(await roleOf(ownerEmail)).toBe('owner');
    await poll(() => owner.getByLabel(`Role of ${ownerEmail}`).inputValue()).toBe('owner');
    await snap(owner, 'members-last-owner');

    // Removing asks once more.
    await owner.getByRole('button', { name: `Remove ${newcomer}`, exact: true }).click();
    await owner.getByRole('button', { name: `Remove ${newcomer} now` }).click();
    await poll(() => memberRow(owner, newcomer).count()).toBe(0);
    await expect(s.services.members.get(newcomer)).rejects.toThrow(/no member/);

    // A pending invite withdrawn: gone from the list, its link refused.
    const ivy = `ivy-${dialect}@example.com`;
    await owner.getByLabel('Email').fill(ivy);
    await owner.getByRole('button', { name: 'Send the invite' }).click();
    await poll(() => owner.locator(`tr[data-invite="${ivy}"]`).count()).toBe(1);
    const url = (await owner.getByTestId('invite-link').textContent())!;
    expect(await owner.getByRole('status').filter({ hasText: 'invite link' }).textContent()).toContain(ivy);
    await owner.getByRole('button', { name: `Withdraw the invite of ${ivy}`, exact: true }).click();
    await owner.getByRole('button', { name: `Withdraw the invite of ${ivy} now` }).click();
    await poll(() => owner.locator(`tr[data-invite="${ivy}"]`).count()).toBe(0);
    const token = url.split('#token=')[1]!;
    expect((await s.call('POST', '/api/v1/auth/invites/accept', { body: { token, password: PASSWORD } })).status).toBe(400);
  }, 60_000);

  it("signing out another of the member's sessions ends it: that browser goes to the sign-in page", async () => {
    const other = await signIn(ownerEmail);
    const otherId = (await sessionOf(other)).body.data.sessionId as string;
    const thisId = (await sessionOf(owner)).body.data.sessionId as string;
    await owner.goto(`${s.url}/members`);
    await poll(() => owner.locator(`tr[data-session-id="${thisId}"]`).textContent()).toContain('this session');
    const row = owner.locator(`tr[data-session-id="${otherId}"]`);
    await row.getByRole('button', { name: /^Sign out the session/ }).click();
    await poll(() => row.count()).toBe(0);
    expect((await sessionOf(other)).status).toBe(401);
    // The other browser's next request finds its session gone.
    await other.getByRole('link', { name: 'Keys' }).click();
    await other.locator('h1', { hasText: 'Sign in' }).waitFor();
    expect(await other.getByRole('status').first().textContent()).toMatch(/session ended/i);
    // This session lives on.
    expect((await sessionOf(owner)).status).toBe(200);
  }, 60_000);

  it('a session opened with an API key is told that the owners manage members', async () => {
    const p = await browserPage();
    await p.goto(`${s.url}/signin`);
    await p.getByRole('button', { name: 'Sign in with an API key' }).click();
    await p.getByLabel('API key').fill(account.key);
    await p.getByRole('button', { name: 'Sign in with the key' }).click();
    await p.locator('h1', { hasText: 'Home' }).waitFor();
    await visit(p, '/members', 'members-key-session');
    expect(await p.getByRole('status').textContent()).toContain("Members are managed by the account's owners");
    expect(await p.locator('table').count()).toBe(0);
  }, 30_000);
});
