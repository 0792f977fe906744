// A small history router: the console's pages are real paths (emailed links point at /reset-password
// and /accept-invite), served by the server's console routes; everything else is a normal link.
import { useEffect, useState } from 'preact/hooks';

/** The operator's pages (console/src/pages/admin.tsx). */
export const ADMIN_PAGES = ['/admin', '/admin/accounts', '/admin/tasks', '/admin/models', '/admin/report'];

/** The console's own paths (the server serves index.html for each; src/api/console.ts lists them too). */
export const PAGES = [
  '/',
  '/signin',
  '/signup',
  '/forgot-password',
  '/reset-password',
  '/accept-invite',
  '/playground',
  '/tasks',
  '/keys',
  '/webhooks',
  '/members',
  '/usage',
  '/topup',
  ...ADMIN_PAGES,
];

export function isConsolePath(path: string): boolean {
  return PAGES.includes(path) || /^\/tasks\/[^/]+$/.test(path) || /^\/admin\/accounts\/[^/]+$/.test(path);
}

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
}

/** The current URL; re-renders on navigation (links, back and forward). */
export function useLocation(): URL {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return new URL(location.href);
}

/** Same-origin links to console pages change the page without a reload. */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !isConsolePath(url.pathname)) return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}
