// The operator's pages (/admin...), loaded by main.tsx only when one is opened: customers never download them.
import { useSession } from '../session.js';
import { Page } from '../ui.js';
import { AdminAccount } from './admin-account.js';
import { AdminAccounts } from './admin-accounts.js';
import { AdminDashboard } from './admin-dashboard.js';
import { AdminModels } from './admin-models.js';
import { AdminDefinitions } from './admin-definitions.js';
import { AdminReport } from './admin-report.js';
import { AdminTasks } from './admin-tasks.js';
import './admin.css';

export function AdminRoutes({ path, query }: { path: string; query: URLSearchParams }) {
  const session = useSession();
  if (session.status !== 'in' || session.session.role !== 'operator')
    return (
      <Page title="Operators only">
        <p class="alert error" role="alert">
          These pages are for operators: members with the operator role (<code>gengate member create --role operator</code>). The admin API refuses this session
          (403).
        </p>
        <p>
          <a href="/">Go home</a>
        </p>
      </Page>
    );
  if (path === '/admin') return <AdminDashboard query={query} />;
  if (path === '/admin/accounts') return <AdminAccounts query={query} />;
  if (path === '/admin/tasks') return <AdminTasks query={query} />;
  if (path === '/admin/models') return <AdminModels />;
  if (path === '/admin/definitions') return <AdminDefinitions />;
  if (path === '/admin/report') return <AdminReport query={query} />;
  const account = /^\/admin\/accounts\/([^/]+)$/.exec(path);
  if (account) return <AdminAccount accountId={decodeURIComponent(account[1]!)} />;
  return (
    <Page title="Page not found">
      <p>
        There is no operator page at <code>{path}</code>. <a href="/admin">Go to the dashboard</a>.
      </p>
    </Page>
  );
}
