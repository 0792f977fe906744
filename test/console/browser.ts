import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { consoleBuild } from '../helpers/console-build.js';
import { CHROMIUM, needs } from '../helpers/tools.js';

/**
 * Whether this machine can run the browser tests: Debian's Chromium at CHROMIUM_PATH (.ci/run installs
 * the package when it is missing); without it they skip with a notice (TEST_NO_SKIP=1: fail).
 */
export const HAS_BROWSER = needs('chromium');

/** Screenshots of every page land here (gitignored); docs/console/ keeps copies of the main ones. */
export const SHOTS = path.resolve('test-output/console');

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Playwright gives each launch a fresh temporary profile (its own --user-data-dir).
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page (evaluated through the DevTools protocol, so the page's CSP stays as served): no serious or critical issue. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: any[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations, `axe on ${what}`).toEqual([]);
}

/** Saves a full-page screenshot as test-output/console/NAME.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * Chromium and the console built from today's sources (once per run and per change of console/, by
 * the global setup: test/helpers/console-build.ts; the server reads it through CONSOLE_DIR), for the
 * test file that calls this at its top: both ready before its first test, the browser closed after its last.
 */
export function useConsoleBrowser(): { browser: Browser; consoleDir: string } {
  const kit = { browser: undefined as unknown as Browser, consoleDir: '' };
  beforeAll(async () => {
    if (!HAS_BROWSER) return;
    [kit.browser, kit.consoleDir] = await Promise.all([launch(), consoleBuild(inject('consoleBuildRoot'))]);
  }, 120_000);
  afterAll(async () => {
    await kit.browser?.close();
  });
  return kit;
}

/**
 * `visit` opens a path of the server at `base()`, waits for its heading (with `settled`, also for no
 * "Loading" left), checks it with axe-core and saves a screenshot as `name`; `snap` only saves one.
 * Screenshots are taken once, on the SQLite run: the pages look the same on both databases.
 */
export function pageVisits(dialect: 'sqlite' | 'postgres', base: () => string, opts: { settled?: boolean } = {}) {
  const snap = async (p: Page, name: string) => {
    if (dialect === 'sqlite') await shot(p, name);
  };
  const visit = async (p: Page, path: string, name: string) => {
    await p.goto(base() + path);
    await p.locator('h1').first().waitFor();
    if (opts.settled) await expect.poll(() => p.locator('[role=status]:has-text("Loading")').count(), { timeout: 15_000 }).toBe(0);
    await expectAccessible(p, path);
    await snap(p, name);
  };
  return { snap, visit };
}
