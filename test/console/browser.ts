import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { expect } from 'vitest';

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

/** A free loopback port, so the server's PUBLIC_BASE_URL (its file and result links) names the port it listens on. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
