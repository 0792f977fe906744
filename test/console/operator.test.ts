import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServer, startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { MovableClock, create, settle } from '../tasks/support.js';
import { expectAccessible, pageVisits, useConsoleBrowser, HAS_BROWSER } from './browser.js';

/**
 * The operator's console pages in Chromium (decision 2002), on both databases: an operator member
 * signs in, searches and creates accounts, tops up, adjusts, sets the dialect, disables one (its key
 * then 403), lists every account's tasks with filters (a leased task flagged), disables a model
 * (the customer's playground says so), sees the money report reconciled and the dashboard's charts.
 * A customer's member is refused. axe-core on every page; screenshots in test-output/console/.
 */
const ADMIN_TOKEN = 'operator-console-admin-token-0123456';
const PASSWORD = 'operator horse battery';

const chrome = useConsoleBrowser();

describe.skipIf(!HAS_BROWSER).each(dialects())('the operator pages in Chromium on %s', (dialect) => {
  const clock = new MovableClock();
  let s: TestServer;
  let ctx: BrowserContext;
  let page: Page;
  let customer: { id: string; key: string };
  const customerEmail = `owner-${dialect}@studio.example`;
  const { snap, visit } = pageVisits(dialect, () => s.url, { settled: true });
  const admin = (method: string, path: string, body?: unknown) => s.call(method, path, { key: ADMIN_TOKEN, body });
  const signIn = async (p: Page, email: string, password: string) => {
    await p.goto(`${s.url}/signin`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.locator('h1', { hasText: 'Home' }).waitFor();
  };

  beforeAll(async () => {
    s = await startServerOnFreePort(
      dialect,
      {
        ADMIN_TOKEN,
        CONSOLE_DIR: chrome.consoleDir,
        LOCAL_QUEUE_MS: '0',
        LOCAL_GENERATE_MS: '0',
        ENGINE_POLL_MS: '20',
        FIRST_RUN_ACCOUNT: 'false',
      },
      undefined,
      { clock },
    );
    const ops = await s.account(0, 'Operations');
    // As `gengate member create --role operator` does.
    await s.services.members.create(ops.id, `ops-${dialect}@gengate.example`, 'operator', PASSWORD);
    customer = await s.account(10, 'Studio North');
    await s.services.members.create(customer.id, customerEmail, 'owner', PASSWORD);
    await s.account(1, 'Studio South');
    s.services.engine.start();
    ctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await ctx.newPage();
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await s?.close();
  });

  it('signs the operator in; the dashboard draws its charts from the database', async () => {
    for (let i = 0; i < 3; i++) await settle(s, customer.key, await create(s, customer.key, 'google/nano-banana', { prompt: `p${i}` }));
    await signIn(page, `ops-${dialect}@gengate.example`, PASSWORD);
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.locator('h1', { hasText: 'Operator dashboard' }).waitFor();
    await expect.poll(() => page.locator('[data-testid=chart] canvas').count(), { timeout: 15_000 }).toBe(5);
    expect(await page.getByRole('img', { name: /Tasks per minute: In the period: 3 created, 3 succeeded, 0 failed/ }).count()).toBe(1);
    expect(await page.getByTestId('now-waiting').textContent()).toBe('0');
    await expectAccessible(page, '/admin');
    await snap(page, 'admin-dashboard');
  }, 60_000);

  it('searches accounts, creates one with its key, tops up, adjusts, sets the dialect and disables it (its key then 403)', async () => {
    await visit(page, '/admin/accounts', 'admin-accounts');
    await page.getByLabel('Search accounts').fill('north');
    await expect.poll(() => page.locator('table.tasks tbody tr').count()).toBe(1);
    expect(await page.locator('table.tasks tbody').textContent()).toContain('Studio North');
    expect(page.url()).toContain('q=north');
    await page.getByLabel('Search accounts').fill('nobody here');
    await page.getByText('No account matches').waitFor();
    await page.getByLabel('Search accounts').fill('');

    await page.getByLabel('Account name').fill('Studio East');
    await page.getByLabel('Opening balance (USD, optional)').fill('2');
    await page.getByRole('button', { name: 'Create the account' }).click();
    const key = (await page.getByTestId('new-account-key').textContent())!.trim();
    expect(key).toMatch(/^gg_/);
    expect((await s.call('GET', '/api/v1/user/balance', { key })).body.data.balance).toBe('2.0000');
    await page.getByRole('link', { name: 'Open Studio East' }).click();
    await page.locator('h1', { hasText: 'Account Studio East' }).waitFor();
    const id = decodeURIComponent(page.url().split('/admin/accounts/')[1]!);

    await page.getByLabel('Amount (USD)', { exact: true }).fill('3.5');
    await page.getByLabel('Note (optional)').fill('invoice 12');
    await page.getByRole('button', { name: 'Top up', exact: true }).click();
    await expect.poll(() => page.getByTestId('account-balance').textContent(), { timeout: 15_000 }).toBe('5.5000 USD');
    await page.getByLabel('Amount (USD: positive credits, negative debits)').fill('-0.25');
    await page.getByLabel('Reason (shown in the ledger)').fill('goodwill reversed');
    await page.getByRole('button', { name: 'Adjust', exact: true }).click();
    await expect.poll(() => page.getByTestId('account-balance').textContent(), { timeout: 15_000 }).toBe('5.2500 USD');
    // Money exactly the ledger's.
    const entries = (await admin('GET', `/admin/v1/accounts/${id}/ledger`)).body.data as { amountMicros: number }[];
    expect(entries.reduce((x, e) => x + e.amountMicros, 0)).toBe(5_250_000);
    await expect.poll(() => page.getByTestId('ledger-check').textContent()).toContain('The 3 entries add up to 5.2500 USD: the balance.');
    expect(await page.locator('table.tasks').last().textContent()).toContain('goodwill reversed');
    // A debit past the balance is refused in the server's words, nothing changes.
    await page.getByLabel('Amount (USD: positive credits, negative debits)').fill('-100');
    await page.getByLabel('Reason (shown in the ledger)').fill('too much');
    await page.getByRole('button', { name: 'Adjust', exact: true }).click();
    await page
      .getByText(/Refused:/)
      .first()
      .waitFor();
    expect(await page.getByTestId('account-balance').textContent()).toBe('5.2500 USD');

    await page.getByLabel('Dialect').selectOption('kie');
    await page.getByRole('button', { name: 'Save dialect' }).click();
    await expect.poll(async () => (await admin('GET', `/admin/v1/accounts/${id}`)).body.data.dialect, { timeout: 15_000 }).toBe('kie');
    await page.getByRole('button', { name: 'Disable the account' }).click();
    await expect.poll(() => page.getByTestId('account-status').textContent(), { timeout: 15_000 }).toBe('disabled');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(403);
    await expectAccessible(page, '/admin/accounts/ID');
    await snap(page, 'admin-account');
    await page.getByRole('button', { name: 'Enable the account' }).click();
    await expect.poll(() => page.getByTestId('account-status').textContent(), { timeout: 15_000 }).toBe('active');
    expect((await s.call('GET', '/api/v1/user/balance', { key })).status).toBe(200);
  }, 90_000);

  it("lists every account's tasks with filters; a leased task is flagged", async () => {
    const other = await s.account(5, 'Studio West');
    const waiting = await create(s, other.key, 'google/nano-banana', { prompt: 'held' });
    // A worker holds its lease (as the engine does while it works on a task).
    await s.services.database.tx(async (trx) => {
      await trx
        .updateTable('tasks')
        .set({ state: 'generating', locked_until: clock.now() + 600_000, locked_by: 'worker-7' })
        .where('id', '=', waiting)
        .execute();
    });
    await visit(page, '/admin/tasks', 'admin-tasks');
    await expect.poll(() => page.locator('[data-testid=admin-tasks] tbody tr').count()).toBe(4);
    await page.getByLabel('Account id').fill(customer.id);
    await page.getByLabel('Account id').press('Tab');
    await expect.poll(() => page.locator('[data-testid=admin-tasks] tbody tr').count(), { timeout: 15_000 }).toBe(3);
    expect(page.url()).toContain(`accountId=${customer.id}`);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('Only').selectOption('leased');
    await expect.poll(() => page.locator('[data-testid=admin-tasks] tbody tr').count(), { timeout: 15_000 }).toBe(1);
    const row = await page.locator('[data-testid=admin-tasks] tbody tr').textContent();
    expect(row).toContain(waiting);
    expect(row).toContain('leased');
    expect(row).toContain('held by worker-7');
    await page.getByLabel('State').selectOption('success');
    await page.getByText('No task matches these filters.').waitFor();
    await expectAccessible(page, '/admin/tasks filtered');
    await s.services.database.tx(async (trx) => {
      await trx.updateTable('tasks').set({ state: 'waiting', locked_until: null, locked_by: null }).where('id', '=', waiting).execute();
    });
  }, 60_000);

  it("disables a model from the models page, and the customer's playground says so", async () => {
    // A task generating on the model's first route (held by a worker, so the engine leaves it alone).
    const running = await create(s, customer.key, 'seedance-2.0-fast', { prompt: 'in use', duration: 4 });
    await settle(s, customer.key, running);
    const later = clock.now() + 3_600_000;
    await s.services.database.tx(async (trx) => {
      await trx
        .updateTable('tasks')
        .set({ state: 'generating', run_at: later, locked_until: later, locked_by: 'worker-9' })
        .where('id', '=', running)
        .execute();
    });
    await visit(page, '/admin/models', 'admin-models');
    await expect.poll(() => page.locator('tr[data-model="seedance-2.0-fast"]').textContent(), { timeout: 15_000 }).toContain('in use: 1');
    expect(await page.locator('tr[data-model="google/nano-banana"]').textContent()).toContain('in use: 0');
    const row = page.locator('tr[data-model="suno-v6"]');
    expect(await row.textContent()).toContain('enabled');
    await page.getByRole('button', { name: 'Disable suno-v6' }).click();
    await expect.poll(() => row.locator('.badge').first().textContent(), { timeout: 15_000 }).toBe('disabled');
    const cctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const c = await cctx.newPage();
      await signIn(c, customerEmail, PASSWORD);
      await c.goto(`${s.url}/playground?model=suno-v6`);
      await c.getByTestId('disabled').waitFor();
      expect(await c.getByRole('button', { name: 'Run' }).isDisabled()).toBe(true);
      await snap(c, 'admin-model-disabled-playground');
      // The customer's member has no operator pages: the page says so, the API refuses (403).
      expect(await c.getByRole('link', { name: 'Operator' }).count()).toBe(0);
      await c.goto(`${s.url}/admin/accounts`);
      await c.locator('h1', { hasText: 'Operators only' }).waitFor();
      await expectAccessible(c, '/admin as a customer');
      const status = await c.evaluate(async () => (await fetch('/admin/v1/accounts')).status);
      expect(status).toBe(403);
    } finally {
      await cctx.close();
    }
    await s.services.database.tx(async (trx) => {
      await trx.updateTable('tasks').set({ state: 'success', locked_until: null, locked_by: null }).where('id', '=', running).execute();
    });
    await page.getByRole('button', { name: 'Enable suno-v6' }).click();
    await expect.poll(() => row.locator('.badge').first().textContent(), { timeout: 15_000 }).toBe('enabled');
  }, 60_000);

  it('shows the money report reconciled; keyboard, dark theme and phone width work', async () => {
    await visit(page, '/admin/report', 'admin-report');
    await expect.poll(() => page.getByTestId('reconciliation').textContent(), { timeout: 15_000 }).toContain('Reconciled');
    // Keyboard: the operator's sub-navigation is reachable and works with Enter.
    await page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name: 'Accounts' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('h1', { hasText: 'Accounts' }).waitFor();

    const phone = await chrome.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const p = await phone.newPage();
      await signIn(p, `ops-${dialect}@gengate.example`, PASSWORD);
      await p.goto(`${s.url}/admin`);
      await expect.poll(() => p.locator('[data-testid=chart] canvas').count(), { timeout: 15_000 }).toBe(5);
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(390);
      await expectAccessible(p, '/admin (phone, dark)');
      await snap(p, 'admin-phone-dark');
      await visit(p, '/admin/tasks', 'admin-phone-tasks');
    } finally {
      await phone.close();
    }
  }, 60_000);
});

describe.skipIf(!HAS_BROWSER)('the operator pages without ADMIN_TOKEN', () => {
  it('say the admin API is off and how to turn it on', async () => {
    const s = await startServer('sqlite', { CONSOLE_DIR: chrome.consoleDir, FIRST_RUN_ACCOUNT: 'false' });
    const ctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const ops = await s.account(0, 'Operations');
      await s.services.members.create(ops.id, 'ops-off@gengate.example', 'operator', PASSWORD);
      const p = await ctx.newPage();
      await p.goto(`${s.url}/signin?next=${encodeURIComponent('/admin/accounts')}`);
      await p.getByLabel('Email').fill('ops-off@gengate.example');
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.locator('h1', { hasText: 'Accounts' }).waitFor();
      await expect
        .poll(() => p.getByRole('alert').first().textContent(), { timeout: 15_000 })
        .toContain('the admin API is off on this server: set ADMIN_TOKEN');
      await expectAccessible(p, '/admin/accounts without ADMIN_TOKEN');
    } finally {
      await ctx.close();
      await s.close();
    }
  }, 60_000);
});
