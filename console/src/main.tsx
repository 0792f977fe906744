// The GenGate console: a Preact SPA on top of the server's own API (decision 2000, docs/console.md).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, whenSignedOut } from './api.js';
import { interceptLinks, navigate, useLocation } from './router.js';
import { refreshSession, signedOut, useSession } from './session.js';
import { ErrorBox, Loading } from './ui.js';
import { AcceptInvite, ForgotPassword, ResetPassword, SignIn, SignUp } from './pages/auth.js';
import { Home } from './pages/home.js';
import { Playground } from './pages/playground.js';
import { TaskList } from './pages/tasks.js';
import { TaskDetail } from './pages/task.js';
import { Keys } from './pages/keys.js';
import { Webhooks } from './pages/webhooks.js';
import { Members } from './pages/members.js';
import { Usage } from './pages/usage.js';
import { TopUp } from './pages/topup.js';
import './style.css';

const PUBLIC = ['/signin', '/signup', '/forgot-password', '/reset-password', '/accept-invite'];

type Theme = 'light' | 'dark' | 'system';

function useTheme(): [Theme, (t: Theme) => void] {
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem('gg-theme') as Theme | null) ?? 'system');
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    localStorage.setItem('gg-theme', theme);
  }, [theme]);
  return [theme, setTheme];
}

function Nav() {
  const session = useSession();
  const loc = useLocation();
  const [theme, setTheme] = useTheme();
  const [open, setOpen] = useState(false);
  const signedIn = session.status === 'in';
  const link = (href: string, label: string) => {
    const current = href === '/' ? loc.pathname === '/' : loc.pathname.startsWith(href);
    return (
      <li>
        <a href={href} aria-current={current ? 'page' : undefined} onClick={() => setOpen(false)}>
          {label}
        </a>
      </li>
    );
  };
  const signOut = async () => {
    try {
      await api('POST', '/api/v1/auth/signout');
    } catch {
      /* gone already */
    }
    signedOut('You signed out.');
    navigate('/signin');
  };
  return (
    <header class="top">
      <a class="brand" href="/">
        GenGate
      </a>
      {signedIn && (
        <button class="menu-button" aria-expanded={open} aria-controls="main-nav" onClick={() => setOpen(!open)}>
          Menu
        </button>
      )}
      <nav id="main-nav" aria-label="Main" class={open ? 'open' : ''}>
        {signedIn && (
          <ul>
            {link('/', 'Home')}
            {link('/playground', 'Playground')}
            {link('/tasks', 'Tasks')}
            {link('/usage', 'Usage')}
            {link('/keys', 'Keys')}
            {link('/webhooks', 'Webhooks')}
            {link('/members', 'Members')}
            {session.session.role === 'operator' && link('/admin', 'Operator')}
            <li>
              <a href="/docs">API reference</a>
            </li>
          </ul>
        )}
      </nav>
      <div class="top-right">
        <label class="theme">
          <span class="sr-only">Theme</span>
          <select value={theme} onChange={(e) => setTheme((e.target as HTMLSelectElement).value as Theme)}>
            <option value="system">System theme</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
        {session.status === 'in' && (
          <>
            <span class="who" title={session.session.account.id}>
              {session.session.member?.email ?? 'API key'} · {session.session.account.name}
            </span>
            <button class="link" onClick={signOut}>
              Sign out
            </button>
          </>
        )}
      </div>
    </header>
  );
}

type AdminModule = typeof import('./pages/admin.js');

/** The operator's pages, fetched the first time one is opened (customers never load them). */
function Admin({ path, query }: { path: string; query: URLSearchParams }) {
  const [mod, setMod] = useState<AdminModule | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void import('./pages/admin.js').then(setMod, () => setError(new Error('the operator pages could not be loaded; reload the page'))), []);
  if (error) return <ErrorBox error={error} />;
  if (!mod) return <Loading what="the operator pages" />;
  return <mod.AdminRoutes path={path} query={query} />;
}

function Routes() {
  const loc = useLocation();
  const session = useSession();
  const path = loc.pathname;
  const isPublic = PUBLIC.includes(path);

  useEffect(() => {
    if (session.status === 'out' && !isPublic) navigate(`/signin?next=${encodeURIComponent(path + loc.search)}`, { replace: true });
    if (session.status === 'in' && (path === '/signin' || path === '/signup')) {
      const next = loc.searchParams.get('next') ?? '/';
      // A server page (the OAuth consent) is loaded by the browser, not by the console's router.
      if (next.startsWith('/oauth/')) location.assign(next);
      else navigate(next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
    }
  }, [session.status, path]);

  if (session.status === 'loading') return <Loading what="the console" />;
  if (path === '/signin') return <SignIn />;
  if (path === '/signup') return <SignUp />;
  if (path === '/forgot-password') return <ForgotPassword />;
  if (path === '/reset-password') return <ResetPassword />;
  if (path === '/accept-invite') return <AcceptInvite />;
  if (session.status !== 'in') return <Loading what="the sign-in page" />;
  if (path === '/') return <Home />;
  if (path === '/playground') return <Playground model={loc.searchParams.get('model')} />;
  if (path === '/tasks') return <TaskList query={loc.searchParams} />;
  if (path === '/keys') return <Keys />;
  if (path === '/webhooks') return <Webhooks />;
  if (path === '/members') return <Members />;
  if (path === '/usage') return <Usage query={loc.searchParams} />;
  if (path === '/topup') return <TopUp />;
  if (path === '/admin' || path.startsWith('/admin/')) return <Admin path={path} query={loc.searchParams} />;
  const task = /^\/tasks\/([^/]+)$/.exec(path);
  if (task) return <TaskDetail taskId={decodeURIComponent(task[1]!)} />;
  return (
    <section class="page">
      <h1>Page not found</h1>
      <p>
        There is no console page at <code>{path}</code>. <a href="/">Go home</a>.
      </p>
    </section>
  );
}

function App() {
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Nav />
      <main id="main">
        <Routes />
      </main>
    </>
  );
}

whenSignedOut((msg) => {
  signedOut(`Your session ended (${msg}). Sign in again.`);
});
interceptLinks();
void refreshSession();
render(<App />, document.getElementById('app')!);
