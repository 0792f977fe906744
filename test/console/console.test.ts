import sharp from 'sharp';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { startServerOnFreePort, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../callbacks/receiver.js';
import { MovableClock, eventually } from '../tasks/support.js';
import { expectAccessible, pageVisits, useConsoleBrowser, HAS_BROWSER } from './browser.js';

/**
 * The console in a real browser (Debian's Chromium through playwright-core), against the real
 * server on loopback with the local backend: sign-up, sign-in, the playground for an image, a
 * video and a music model with uploads, cancel, a disabled model, another account's task by URL,
 * CSRF and session expiry. axe-core checks every page; screenshots go to test-output/console/.
 */
const ADMIN_TOKEN = 'console-test-admin-token-0123456789';
const PASSWORD = 'correct horse battery';

const chrome = useConsoleBrowser();

const png = (color: string) =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: color } })
    .png()
    .toBuffer();

describe.skipIf(!HAS_BROWSER).each(dialects())('the console in Chromium on %s', (dialect) => {
  const clock = new MovableClock();
  let s: TestServer;
  let ctx: BrowserContext;
  let page: Page;
  let accountId = '';
  const taskIds: string[] = [];
  const { snap, visit } = pageVisits(dialect, () => s.url);
  const adminCall = (method: string, path: string, body?: unknown) => s.call(method, path, { key: ADMIN_TOKEN, body });
  const ledgerBalance = async () => {
    const rows = await s.services.database.db.selectFrom('ledger_entries').select('amount_micros').where('account_id', '=', accountId).execute();
    const micros = rows.reduce((sum, r) => sum + Number(r.amount_micros), 0);
    return (micros / 1_000_000).toFixed(4);
  };

  beforeAll(async () => {
    s = await startServerOnFreePort(
      dialect,
      {
        SIGNUP: 'open',
        ADMIN_TOKEN,
        CONSOLE_DIR: chrome.consoleDir,
        LOCAL_QUEUE_MS: '300',
        LOCAL_GENERATE_MS: '800',
        ENGINE_POLL_MS: '50',
        SESSION_TTL_HOURS: '2',
        FIRST_RUN_ACCOUNT: 'false',
        ALLOW_PRIVATE_NETWORK: 'true', // the callback receiver is on loopback
      },
      undefined,
      { clock },
    );
    s.services.engine.start();
    s.services.callbacks.start();
    ctx = await chrome.browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await s?.close();
  });

  it('serves the page at / with no-store and the hashed assets immutable, without shadowing the API', async () => {
    const index = await fetch(`${s.url}/tasks/anything`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-store');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await index.text();
    expect(html).toContain('content="{&quot;signup&quot;:&quot;open&quot;');
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(s.url + script);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${s.url}/console/assets/nope.js`)).status).toBe(404);
    expect((await s.call('GET', '/api/v1/models')).status).toBe(200);
    expect((await s.call('GET', '/api/v1/jobs/list')).status).toBe(401);
  });

  it('signs up (the first key shown once), lands on home with a zero balance, then signs out and in again', async () => {
    await visit(page, '/', 'signin');
    expect(page.url()).toContain('/signin');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.locator('h1', { hasText: 'Sign up' }).waitFor();
    await expectAccessible(page, '/signup');
    await snap(page, 'signup');
    await page.getByLabel('Account name').fill('Studio A');
    await page.getByLabel('Email').fill(`a-${dialect}@example.com`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the account' }).click();
    await expect.poll(() => page.getByTestId('first-key').textContent(), { timeout: 15_000 }).toMatch(/^gg_/);
    await page.getByRole('button', { name: 'Continue to the console' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('0.0000 USD');
    accountId = (await s.call('GET', '/api/v1/auth/session', { headers: { cookie: (await ctx.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } })).body
      .data.account.id;
    await page.getByText('No tasks yet').waitFor();
    await expectAccessible(page, 'home, empty');
    await snap(page, 'home-empty');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('h1', { hasText: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(`a-${dialect}@example.com`);
    await page.getByLabel('Password').fill('wrong password 123');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 15_000 }).toMatch(/Not done/);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('h1', { hasText: 'Home' }).waitFor();
    // The operator credits the account; the home page shows the ledger's balance exactly.
    expect((await adminCall('POST', `/admin/v1/accounts/${accountId}/adjustments`, { amount: '20', reason: 'console test' })).status).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe(`${await ledgerBalance()} USD`);
    expect(await ledgerBalance()).toBe('20.0000');
  }, 60_000);

  it('runs an image model with an uploaded photo: live price, progress, the state walking, the image, cost', async () => {
    await visit(page, '/playground', 'playground-models');
    await page
      .getByRole('link', { name: /Nano Banana Edit/i })
      .first()
      .click();
    await page.locator('#in-prompt').waitFor();
    await page.locator('#in-prompt').fill('a red fox in snow');
    await page.locator('input[data-field="image_input"]').setInputFiles({ name: 'fox.png', mimeType: 'image/png', buffer: await png('#c04020') });
    await expect.poll(() => page.locator('#in-image_input').inputValue(), { timeout: 15_000 }).toMatch(/^http/);
    await expect.poll(() => page.getByTestId('price').textContent(), { timeout: 15_000 }).toMatch(/^Price: \$\d+\.\d{3}/);
    await page.locator('details.snippets summary').click();
    expect(await page.locator('#snippet').textContent()).toContain('"model":"google/nano-banana-edit"');
    await expectAccessible(page, 'playground form');
    await snap(page, 'playground-image-form');
    // Every state the page shows, as it shows it (no reload, no click: the page polls by itself).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as any).seenStates = seen;
      new MutationObserver(() => {
        const text = document.querySelector('.outcome .badge')?.textContent;
        if (text && seen[seen.length - 1] !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('.outcome').waitFor();
    await page.locator('.media img').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('.outcome .badge').first().textContent()).toBe('Success');
    const seen: string[] = await page.evaluate(() => (window as any).seenStates);
    expect(seen[seen.length - 1]).toBe('Success');
    expect(seen.length, seen.join(' → ')).toBeGreaterThan(1); // it walked: at least one state before Success
    const id = (await page.locator('section[aria-label="The run"] h2 a').textContent())!;
    taskIds.push(id);
    const task = (await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: await keyOf() })).body.data;
    expect(await page.getByTestId('cost').textContent()).toBe(`${task.costUsd} USD`);
    await expectAccessible(page, 'playground result');
    await snap(page, 'playground-image-result');
  }, 60_000);

  /** An API key of the account, made by the operator, for reading tasks from the test. */
  let key = '';
  async function keyOf() {
    if (!key) key = (await adminCall('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'test reader' })).body.data.apiKey;
    return key;
  }

  it('runs a video model with an uploaded first frame (a slow upload shows its progress): a video player and the last frame', async () => {
    await page.goto(`${s.url}/playground?model=seedance-2.0-fast`);
    await page.locator('#in-prompt').fill('waves at dusk');
    await page.locator('#in-resolution').selectOption('480p');
    await page.locator('#in-duration').fill('4');
    await page.locator('#in-return_last_frame').check();
    // A slow upload (Chromium's network emulation) of a larger photo: the progress bar shows while it goes.
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 200 * 1024 });
    const noise = await sharp(Buffer.from(Array.from({ length: 400 * 300 * 3 }, (_, i) => (i * 7919) % 251)), { raw: { width: 400, height: 300, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    await page.locator('input[data-field="first_frame_url"]').setInputFiles({ name: 'frame.png', mimeType: 'image/png', buffer: noise });
    await page.locator('progress[aria-label="Uploading frame.png"]').waitFor();
    await expect.poll(() => page.locator('#in-first_frame_url').inputValue(), { timeout: 30_000 }).toMatch(/^http/);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
    await expect.poll(() => page.getByTestId('price').textContent(), { timeout: 15_000 }).toMatch(/^Price: \$/);
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('.media video').waitFor({ timeout: 60_000 });
    await page.locator('figure', { hasText: 'Last frame' }).locator('img').waitFor();
    taskIds.push((await page.locator('section[aria-label="The run"] h2 a').textContent())!);
    await expectAccessible(page, 'video result');
    await snap(page, 'playground-video-result');
  }, 90_000);

  it('runs a music model: two audio players', async () => {
    await page.goto(`${s.url}/playground?model=suno-v6`);
    await page.locator('#in-prompt').fill('a calm piano tune');
    await expect.poll(() => page.getByTestId('price').textContent(), { timeout: 15_000 }).toMatch(/^Price: \$/);
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.locator('.media audio').count(), { timeout: 60_000 }).toBe(2);
    taskIds.push((await page.locator('section[aria-label="The run"] h2 a').textContent())!);
    await expectAccessible(page, 'music result');
    await snap(page, 'playground-music-result');
  }, 90_000);

  it('cancels a running task: it fails with 499 and is refunded in full; the balance is the ledger sum', async () => {
    await page.goto(`${s.url}/playground?model=seedance-2.0-fast`);
    await page.locator('#in-prompt').fill('a long render to cancel');
    await page.locator('#in-resolution').selectOption('720p');
    await page.locator('#in-duration').fill('12');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('button', { name: 'Cancel task' }).click();
    await expect.poll(() => page.locator('.outcome .alert.error').textContent(), { timeout: 30_000 }).toMatch(/Failed \(499\)/);
    expect(await page.getByTestId('refund').textContent()).toMatch(/^refunded in full/);
    taskIds.push((await page.locator('section[aria-label="The run"] h2 a').textContent())!);
    await page.goto(`${s.url}/`);
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe(`${await ledgerBalance()} USD`);
    const spent = (20 - Number(await ledgerBalance())).toFixed(4);
    await expect.poll(() => page.getByTestId('spend').textContent(), { timeout: 15_000 }).toBe(`${spent} USD`);
    await expectAccessible(page, 'home with tasks');
    await snap(page, 'home');
  }, 60_000);

  it('lists tasks with filters and paging, and shows a task with its param, result and refund', async () => {
    await visit(page, '/tasks', 'tasks');
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(4);
    await page.locator('#f-state').selectOption('fail');
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(1);
    expect(page.url()).toContain('state=fail');
    await page.locator('#f-state').selectOption('');
    await page.locator('#f-model').selectOption('seedance-2.0-fast');
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(2);
    await page.locator('#f-from').fill('2001-01-01');
    await page.locator('#f-to').fill('2001-01-02');
    await expect.poll(() => page.getByText('No task matches these filters.').isVisible(), { timeout: 15_000 }).toBe(true);
    await expectAccessible(page, 'tasks, none match');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    // Paging: 20 a page; make the list longer than a page with cheap tasks through the API.
    for (let i = 0; i < 18; i++) {
      const r = await s.call('POST', '/api/v1/jobs/createTask', { key: await keyOf(), body: { model: 'google/nano-banana', input: { prompt: `p${i}` } } });
      expect(r.status).toBe(200);
    }
    await page.reload();
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(2);
    await page.getByRole('button', { name: 'First page' }).click();
    await expect.poll(() => page.locator('table.tasks tbody tr').count(), { timeout: 15_000 }).toBe(20);

    await visit(page, `/tasks/${taskIds[0]}`, 'task-image');
    expect(await page.locator('pre.code').textContent()).toContain('a red fox in snow');
    await page.locator('.media img').waitFor();
    await visit(page, `/tasks/${taskIds[3]}`, 'task-cancelled');
    expect(await page.getByTestId('refund').textContent()).toMatch(/^refunded in full/);
  }, 90_000);

  it('shows the callback deliveries of a task: URL, status, attempts, the HTTP status', async () => {
    const receiver = await startReceiver(() => 200);
    try {
      const r = await s.call('POST', '/api/v1/jobs/createTask', {
        key: await keyOf(),
        body: { model: 'google/nano-banana', input: { prompt: 'called back' }, callBackUrl: `${receiver.url}/hook` },
      });
      const id = r.body.data.taskId as string;
      await eventually(
        async () => (await s.call('GET', `/api/v1/jobs/recordInfo?taskId=${id}`, { key: await keyOf() })).body.data.callback?.status === 'delivered',
        20_000,
      );
      await visit(page, `/tasks/${id}`, 'task-callback');
      const facts = await page.locator('h2:has-text("Callback") + dl').innerText();
      expect(facts).toContain(`${receiver.url}/hook`);
      expect(facts).toMatch(/Delivery\s+delivered/);
      expect(facts).toMatch(/Attempts\s+1/);
      expect(facts).toContain('(HTTP 200)');
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('says so when the operator disables a model, and cannot run it', async () => {
    expect((await adminCall('POST', '/admin/v1/models/suno-v6/disable')).status).toBe(200);
    await visit(page, '/playground?model=suno-v6', 'playground-disabled');
    await page.getByTestId('disabled').waitFor();
    expect(await page.getByRole('button', { name: 'Run' }).isDisabled()).toBe(true);
    expect((await adminCall('POST', '/admin/v1/models/suno-v6/enable')).status).toBe(200);
  });

  it("keeps a member of another account from another account's task by URL", async () => {
    const other = await s.account(1, 'Studio B');
    await s.services.members.create(other.id, `b-${dialect}@example.com`, 'member', PASSWORD);
    const bctx = await chrome.browser.newContext({ viewport: { width: 390, height: 844 } }); // a phone
    const b = await bctx.newPage();
    try {
      await b.goto(`${s.url}/tasks/${taskIds[0]}`);
      await b.locator('h1', { hasText: 'Sign in' }).waitFor();
      await b.getByLabel('Email').fill(`b-${dialect}@example.com`);
      await b.getByLabel('Password').fill(PASSWORD);
      await b.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Back to the asked page after sign-in, which says the task is not there.
      await expect.poll(() => b.getByRole('alert').textContent(), { timeout: 15_000 }).toMatch(/cannot be shown.*not found|cannot be shown.*no task/i);
      expect(await b.locator('.media img').count()).toBe(0);
      await expectAccessible(b, 'task of another account (phone)');
      await snap(b, 'phone-task-not-found');
      await visit(b, '/', 'phone-home');
      await b.getByRole('button', { name: 'Menu' }).click();
      await snap(b, 'phone-menu');
      await visit(b, '/playground?model=google/nano-banana', 'phone-playground');
    } finally {
      await bctx.close();
    }
  }, 60_000);

  it("refuses a change made with the session cookie but without the session's CSRF token; with it the change reaches the operation", async () => {
    await page.goto(`${s.url}/tasks`);
    const [without, wrong, right] = await page.evaluate(async (taskId) => {
      const post = (headers: Record<string, string>) =>
        fetch('/api/v1/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ taskId }) }).then(
          async (r) => ({ status: r.status, body: await r.json() }),
        );
      const token = (await (await fetch('/api/v1/auth/session')).json()).data.csrfToken as string;
      return [await post({}), await post({ 'x-csrf-token': 'not-the-token' }), await post({ 'x-csrf-token': token })];
    }, taskIds[0]!);
    expect(without.status).toBe(403);
    expect(without.body.msg).toMatch(/x-csrf-token/);
    expect(wrong.status).toBe(403);
    // The token lets the request through to the cancel itself, which refuses a finished task.
    expect(right.status).toBe(409);
  });

  it('dark theme and light theme', async () => {
    await page.goto(`${s.url}/`);
    await page.getByLabel('Theme').selectOption('dark');
    await page.getByTestId('balance').waitFor();
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor), { timeout: 15_000 }).toBe('rgb(18, 20, 23)');
    await expectAccessible(page, 'home, dark');
    await snap(page, 'home-dark');
    await page.goto(`${s.url}/playground?model=seedance-2.0-fast`);
    await page.locator('#in-prompt').waitFor();
    await expectAccessible(page, 'playground, dark');
    await snap(page, 'playground-dark');
    await page.getByLabel('Theme').selectOption('light');
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.body).backgroundColor), { timeout: 15_000 }).toBe('rgb(255, 255, 255)');
  });

  it('sends an expired session to the sign-in page, which says why, and back after signing in', async () => {
    await page.goto(`${s.url}/tasks`);
    await page.locator('table.tasks').waitFor();
    clock.advance(3 * 3600_000); // past SESSION_TTL_HOURS=2
    await page.locator('#f-state').selectOption('success');
    await page.locator('h1', { hasText: 'Sign in' }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toMatch(/session ended/i);
    expect(decodeURIComponent(page.url())).toContain('next=/tasks?state=success');
    await expectAccessible(page, 'sign-in after expiry');
    await snap(page, 'signin-expired');
    await page.getByLabel('Email').fill(`a-${dialect}@example.com`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('h1', { hasText: 'Tasks' }).waitFor();
    expect(page.url()).toContain('/tasks?state=success');
  }, 30_000);

  it('has the other sign-in pages: forgot password (no mail here), reset and invite links without a token', async () => {
    const anon = await chrome.browser.newContext();
    const p = await anon.newPage();
    try {
      await visit(p, '/forgot-password', 'forgot-password');
      expect(await p.getByRole('status').textContent()).toMatch(/ask the operator/);
      await visit(p, '/reset-password', 'reset-password');
      expect(await p.getByRole('alert').first().textContent()).toMatch(/link from the email/);
      await visit(p, '/accept-invite', 'accept-invite');
    } finally {
      await anon.close();
    }
  });
});
