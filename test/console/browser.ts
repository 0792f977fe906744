import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect } from 'vitest';

/** Debian's Chromium (.ci/run installs the package when it is missing and exports CHROMIUM_PATH). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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

/** Builds the console from console/ into a temporary folder (the server reads it through CONSOLE_DIR): the test sees today's sources. */
export async function buildConsole(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-console-'));
  await build({ configFile: path.resolve('console/vite.config.ts'), logLevel: 'error', build: { outDir: dir, emptyOutDir: true } });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
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
 * Chromium and a console built from today's sources, for the test file that calls this at its top:
 * both ready before its first test, closed and removed after its last.
 */
export function useConsoleBrowser(): { browser: Browser; consoleDir: string } {
  const kit = { browser: undefined as unknown as Browser, consoleDir: '' };
  let built: Awaited<ReturnType<typeof buildConsole>> | undefined;
  beforeAll(async () => {
    [kit.browser, built] = await Promise.all([launch(), buildConsole()]);
    kit.consoleDir = built.dir;
  }, 120_000);
  afterAll(async () => {
    await kit.browser?.close();
    built?.remove();
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
