import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../callbacks/receiver.js';
import { SECRET_KEY, WEBHOOK_SECRET, completed, deliver, startFakeStripe } from '../fakes/stripe.js';
import { eventually } from '../tasks/support.js';
import { expectAccessible, pageVisits, useConsoleBrowser, HAS_BROWSER } from './browser.js';

/**
 * The console's customer pages in Chromium (issue 20, second part; decision 2001): keys (create with
 * name, scopes, models, budget, expiry; the secret once; revoke), webhooks (reveal, rotate, test
 * delivery) and the low-balance alert, usage (chart, per model, CSV), top-up through the fake Stripe,
 * redeliver on the task page, and home's spend from /api/v1/usage. Every money figure is compared
 * with the API's (the ledger's).
 */
const PASSWORD = 'correct horse battery';

const chrome = useConsoleBrowser();

describe.skipIf(!HAS_BROWSER).each(dialects())('the customer pages in Chromium on %s', (dialect) => {
  let s: TestServer;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let ctx: BrowserContext;
  let page: Page;
  let account = { id: '', key: '' };
  const { snap, visit } = pageVisits(dialect, () => s.url);
  const ledgerMicros = async () => {
    const rows = await s.services.database.db.selectFrom('ledger_entries').select('amount_micros').where('account_id', '=', account.id).execute();
    return rows.reduce((sum, r) => sum + Number(r.amount_micros), 0);
  };
  const runTask = async (model: string, extra: Record<string, unknown> = {}) => {
    const r = await s.call('POST', '/api/v1/jobs/createTask', { key: account.key, body: { model, input: { prompt: 'a lighthouse' }, ...extra } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.data.taskId as string;
    await eventually(async () => (await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: account.key })).body.data.state === 'success', 20_000);
    return id;
  };

  beforeAll(async () => {
    [stripe, receiver] = await Promise.all([startFakeStripe(), startReceiver(() => 200)]);
    s = await startServerOnFreePort(dialect, {
      CONSOLE_DIR: chrome.consoleDir,
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
      LOCAL_QUEUE_MS: '50',
      LOCAL_GENERATE_MS: '100',
      ENGINE_POLL_MS: '50',
      FIRST_RUN_ACCOUNT: 'false',
      ALLOW_PRIVATE_NETWORK: 'true', // the receiver is on loopback
    });
    s.services.engine.start();
    s.services.callbacks.start();
    account = await s.account(20, 'Studio C');
    await s.services.members.create(account.id, `owner-${dialect}@example.com`, 'owner', PASSWORD);
    ctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page = await ctx.newPage();
    await page.goto(`${s.url}/signin`);
    await page.getByLabel('Email').fill(`owner-${dialect}@example.com`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('h1', { hasText: 'Home' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await s?.close();
    await stripe?.close();
    await receiver?.close();
  });

  it('creates a key with name, scopes, models, budget and expiry; shows its secret once; the key works; revoked, it is refused', async () => {
    await visit(page, '/keys', 'keys');
    await page.getByLabel('Name', { exact: true }).fill('nightly job');
    for (const scope of ['tasks:write', 'tasks:read', 'balance:read']) await page.getByRole('checkbox', { name: new RegExp(`^${scope} `) }).check();
    await page.getByRole('checkbox', { name: 'google/nano-banana', exact: true }).check();
    await page.getByLabel('Budget in USD').fill('2');
    await page.getByLabel('Budget period').selectOption('day');
    await page.getByLabel('Expires on').fill('2099-12-31');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await expect.poll(() => page.getByTestId('new-key').textContent(), { timeout: 15_000 }).toMatch(/^gg_/);
    const secret = (await page.getByTestId('new-key').textContent())!;
    await expectAccessible(page, '/keys with a new key');
    await snap(page, 'keys-new');

    const keys = (await s.call('GET', '/api/v1/keys', { key: account.key })).body.data as any[];
    const made = keys.find((k) => k.name === 'nightly job');
    expect(made).toMatchObject({
      scopes: ['tasks:write', 'tasks:read', 'balance:read'],
      models: ['google/nano-banana'],
      expiresAt: '2099-12-31T00:00:00.000Z',
      budget: { amount: '2.0000', period: 'day' },
    });
    const row = page.locator(`tr[data-key-id="${made.id}"]`);
    expect(await row.innerText()).toContain('0.0000 of 2.0000 per UTC day');

    // The key works from outside the browser, within its scopes and models.
    expect((await s.call('GET', '/api/v1/user/balance', { key: secret })).status).toBe(200);
    const other = await s.call('POST', '/api/v1/jobs/createTask', { key: secret, body: { model: 'seedream-flash', input: { prompt: 'x' } } });
    expect(other.status).toBe(403);
    // Shown once: after a reload the page has no secret, and the list shows only the prefix.
    await page.reload();
    await page.locator(`tr[data-key-id="${made.id}"]`).waitFor();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Revoke nightly job' }).click();
    await page.getByRole('button', { name: 'Revoke nightly job now' }).click();
    await expect.poll(() => page.locator(`tr[data-key-id="${made.id}"]`).innerText(), { timeout: 15_000 }).toMatch(/revoked/);
    expect((await s.call('GET', '/api/v1/user/balance', { key: secret })).status).toBe(401);
  }, 60_000);

  it('refuses a key with a budget that is not an amount, in the server words, and makes nothing', async () => {
    await page.goto(`${s.url}/keys`);
    const before = ((await s.call('GET', '/api/v1/keys', { key: account.key })).body.data as any[]).length;
    await page.getByLabel('Name', { exact: true }).fill('bad budget');
    await page.getByLabel('Budget in USD').fill('lots');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 15_000 }).toMatch(/Not created.*amount/);
    expect(((await s.call('GET', '/api/v1/keys', { key: account.key })).body.data as any[]).length).toBe(before);
  }, 30_000);

  it('reveals and rotates the webhook secret, sends a test delivery to a receiver, and sets the low-balance alert', async () => {
    await visit(page, '/webhooks', 'webhooks');
    await page.getByRole('button', { name: 'Reveal the secret' }).click();
    const first = (await s.call('GET', '/api/v1/account/webhook-secret', { key: account.key })).body.data.secret as string;
    await expect.poll(() => page.getByTestId('webhook-secret').textContent(), { timeout: 15_000 }).toBe(first);
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await expect.poll(() => page.getByTestId('previous-secret').textContent(), { timeout: 15_000 }).toBe(first);
    const now = (await s.call('GET', '/api/v1/account/webhook-secret', { key: account.key })).body.data.secret as string;
    expect(now).not.toBe(first);
    expect(await page.getByTestId('webhook-secret').textContent()).toBe(now);

    await page.getByLabel('Receiver URL').fill(`${receiver.url}/test-hook`);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expect.poll(() => page.getByTestId('test-result').textContent(), { timeout: 15_000 }).toMatch(/^Delivered: HTTP 200/);
    const got = receiver.at('/test-hook');
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: 'webhook.test', accountId: account.id });
    expect(got[0]!.headers['webhook-signature']).toBeTruthy();

    await page.getByLabel('Level in USD').fill('5');
    await page.getByLabel('Webhook URL').fill(`${receiver.url}/balance`);
    await page.getByRole('checkbox', { name: 'Email the owners' }).check();
    await page.getByRole('button', { name: 'Save the alert' }).click();
    await expect.poll(() => page.getByTestId('alert-state').textContent(), { timeout: 15_000 }).toMatch(/On at 5.0000 USD, armed/);
    expect((await s.call('GET', '/api/v1/account/alert', { key: account.key })).body.data).toEqual({
      level: '5.0000',
      url: `${receiver.url}/balance`,
      email: true,
      armed: true,
    });
    await expectAccessible(page, '/webhooks after changes');
    await snap(page, 'webhooks-done');
    // A refusal in the server's words; nothing changes.
    await page.getByLabel('Webhook URL').fill('ftp://example.com/x');
    await page.getByLabel('Webhook URL').evaluate((el: HTMLInputElement) => (el.type = 'text'));
    await page.getByRole('button', { name: 'Save the alert' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 15_000 }).toMatch(/Not saved.*url/);
    expect((await s.call('GET', '/api/v1/account/alert', { key: account.key })).body.data.url).toBe(`${receiver.url}/balance`);
  }, 60_000);

  it('redelivers a finished task callback from the task page', async () => {
    const id = await runTask('google/nano-banana', { callBackUrl: `${receiver.url}/cb` });
    await eventually(
      async () => (await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: account.key })).body.data.callback?.status === 'delivered',
      20_000,
    );
    await visit(page, `/tasks/${id}`, 'task-redeliver-before');
    await page.getByRole('button', { name: 'Redeliver the callback' }).click();
    await expect.poll(() => page.getByTestId('redeliver-result').textContent(), { timeout: 15_000 }).toMatch(/^delivered \(HTTP 200/);
    await expect.poll(() => page.getByTestId('deliveries').innerText(), { timeout: 15_000 }).toMatch(/redeliver/);
    expect(receiver.at('/cb')).toHaveLength(2);
    const log = (await s.call('GET', `/api/v1/jobs/callbacks?taskId=${id}`, { key: account.key })).body.data.attempts as any[];
    expect(log.map((a) => a.kind)).toEqual(['delivery', 'redeliver']);
    await expectAccessible(page, 'task after redeliver');
    await snap(page, 'task-redeliver');
  }, 60_000);

  it('charts the spend per day and per model with the API figures, downloads the CSV, and home spend is the usage total', async () => {
    await runTask('seedream-flash');
    await runTask('seedream-flash');
    await visit(page, '/usage', 'usage');
    const days = (await s.call('GET', '/api/v1/usage?group=day', { key: account.key })).body.data;
    const models = (await s.call('GET', '/api/v1/usage?group=model', { key: account.key })).body.data;
    expect(days.total.tasks).toBe(3);
    expect(days.total.spentMicros).toBe(-(await ledgerMicros()) + 20_000_000);
    expect(await page.getByTestId('usage-total').textContent()).toBe(`${days.total.spent} USD`);
    await page.locator('[data-testid="day-chart"] canvas').first().waitFor({ timeout: 15_000 });
    const bars = await page.getByTestId('model-bars').innerText();
    for (const r of models.rows) expect(bars).toContain(`${r.model} ${r.spent} USD`);
    await page.getByText('The figures per day').click();
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = days.rows.find((r: any) => r.day === today);
    expect(await page.getByTestId('day-table').innerText()).toContain(`${today}\t${todayRow.spent}\t3`);
    await snap(page, 'usage-chart');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'per model' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const api = await fetch(`${s.url}/api/v1/usage?group=model&format=csv`, { headers: { authorization: `Bearer ${account.key}` } });
    expect(csv).toBe(await api.text());
    expect(csv.split('\n')[0]).toMatch(/^model,spent_usd/);

    await page.goto(`${s.url}/`);
    const micros = days.total.spentMicros as number;
    const usd = `${Math.floor(micros / 1e6)}.${String(micros % 1e6)
      .padStart(6, '0')
      .replace(/0{1,2}$/, '')} USD`;
    await expect.poll(() => page.getByTestId('spend').textContent(), { timeout: 15_000 }).toBe(usd);
    expect(await page.getByTestId('balance').textContent()).toBe(
      `${(await s.call('GET', '/api/v1/user/balance', { key: account.key })).body.data.balance} USD`,
    );
  }, 90_000);

  it('tops up through Stripe Checkout: the balance moves when the signed event arrives, not on return', async () => {
    await visit(page, '/topup', 'topup');
    const before = await ledgerMicros();
    await page.getByRole('radio', { name: '25 USD' }).check();
    expect(await page.getByLabel('Amount in USD').inputValue()).toBe('25');
    await page.getByRole('button', { name: 'Pay 25 USD with Stripe' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${stripe.url}/pay/`), { timeout: 15_000 });
    const session = stripe.session(new URL(page.url()).pathname.split('/').pop()!);
    expect(session.amountCents).toBe(2500);

    // Back from Checkout before Stripe confirms: nothing credited.
    await page.goto(`${s.url}/topup/success?session_id=${session.id}`);
    expect(await ledgerMicros()).toBe(before);
    await page.goto(`${s.url}/topup`);
    await expect.poll(() => page.getByTestId('topups').innerText(), { timeout: 15_000 }).toMatch(/25\.0000\s+pending/);

    expect((await deliver(s.url, completed(session))).status).toBe(200);
    expect(await ledgerMicros()).toBe(before + 25_000_000);
    await page.reload();
    const balance = (await s.call('GET', '/api/v1/user/balance', { key: account.key })).body.data.balance as string;
    await expect.poll(() => page.getByTestId('topup-balance').textContent(), { timeout: 15_000 }).toBe(`${balance} USD`);
    expect(balance).toBe((Math.floor((before + 25_000_000) / 100) / 10_000).toFixed(4));
    await expect.poll(() => page.getByTestId('topups').innerText(), { timeout: 15_000 }).toMatch(/25\.0000\s+paid\s+25\.0000/);
    await expectAccessible(page, '/topup after a payment');
    await snap(page, 'topup-paid');

    // An amount out of range is refused in the server's words; nothing is started.
    const sessions = stripe.sessions.size;
    await page.getByLabel('Amount in USD').fill('1');
    await page.getByRole('button', { name: 'Pay 1 USD with Stripe' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 15_000 }).toMatch(/Not started.*amount must be from 5 to 1000/);
    expect(stripe.sessions.size).toBe(sessions);
  }, 60_000);

  it('at phone width and in the dark theme', async () => {
    const phone = await chrome.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark', storageState: await ctx.storageState() });
    const p = await phone.newPage();
    try {
      for (const [path, name] of [
        ['/keys', 'phone-keys'],
        ['/webhooks', 'phone-webhooks'],
        ['/usage', 'phone-usage'],
        ['/topup', 'phone-topup'],
      ] as const) {
        await visit(p, path, name);
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path} fits the phone`).toBeLessThanOrEqual(0);
      }
    } finally {
      await phone.close();
    }
  }, 60_000);
});
