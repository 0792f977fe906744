import type { Operation } from './operation.js';

/**
 * The web console's pages (DECISIONS §20, decision 2000): one HTML page, a Preact app, served at
 * each of these paths (emailed links point at /reset-password and /accept-invite). The app calls
 * only the API's own endpoints; these paths serve the page and nothing else.
 */
/** The operator's pages (decision 2002): they call the admin API, which needs ADMIN_TOKEN set and an operator's session. */
export const ADMIN_CONSOLE_PAGES = [
  '/admin',
  '/admin/accounts',
  '/admin/accounts/:accountId',
  '/admin/tasks',
  '/admin/models',
  '/admin/definitions',
  '/admin/report',
];

export const CONSOLE_PAGES = [
  '/',
  '/signin',
  '/signup',
  '/forgot-password',
  '/reset-password',
  '/accept-invite',
  '/playground',
  '/tasks',
  '/tasks/:taskId',
  '/keys',
  '/webhooks',
  '/members',
  '/usage',
  '/topup',
  ...ADMIN_CONSOLE_PAGES,
];

/** The console's built scripts and styles: content-hashed names, immutable. */
export const CONSOLE_ASSETS_PATH = '/console/assets/:file';

const page = (path: string): Operation => ({
  method: 'get',
  path,
  id: `console${path === '/' ? 'Home' : path.replace(/\/:?([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())}`,
  tag: 'Console',
  summary: `The console page ${path} (the same HTML page for every console path; the app runs in the browser)`,
  description: 'Answered with cache-control no-store. See docs/console.md.',
  ...(path === '/topup'
    ? {
        description:
          'TOPUP_URL by default (the 402 answer links to it): the amounts and Stripe Checkout, or how to ask the operator when card payments are off. Answered with cache-control no-store. See docs/console.md.',
      }
    : {}),
  ...(path.includes(':taskId') ? { params: { taskId: 'A task id' } } : {}),
  ...(path.includes(':accountId') ? { params: { accountId: 'An account id' } } : {}),
  ok: { type: 'text/html', description: 'The console page' },
});

export const CONSOLE_OPERATIONS: Operation[] = [
  ...CONSOLE_PAGES.map(page),
  {
    method: 'get',
    path: CONSOLE_ASSETS_PATH,
    id: 'consoleAsset',
    tag: 'Console',
    summary: "The console's scripts and styles (content-hashed names, cache-control immutable)",
    params: { file: 'File name' },
    ok: { type: 'application/octet-stream', description: 'The file' },
    errors: ['not_found'],
  },
];
