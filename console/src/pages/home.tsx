// Home: balance, spend this month, recent tasks.
import { useEffect, useState } from 'preact/hooks';
import { api, settings, type TaskPage } from '../api.js';
import { monthStartUtc, usd } from '../format.js';
import { TaskTable } from '../tasklist.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';

interface Spend {
  micros: number;
  tasks: number;
}

/**
 * This UTC month's spend from the ledger (GET /api/v1/usage from the first of the month to today):
 * charges less the refunds made in the month, in micro-USD, exactly the ledger's task entries.
 */
async function spendThisMonth(): Promise<Spend> {
  const from = new Date(monthStartUtc()).toISOString().slice(0, 10);
  const usage = await api<{ total: { spentMicros: number; tasks: number } }>('GET', `/api/v1/usage?from=${from}&group=model`);
  return { micros: usage.total.spentMicros, tasks: usage.total.tasks };
}

export function Home() {
  const [balance, setBalance] = useState<{ balance: string } | null>(null);
  const [spend, setSpend] = useState<Spend | null>(null);
  const [recent, setRecent] = useState<TaskPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api<{ balance: string }>('GET', '/api/v1/user/balance').then(setBalance, setError);
    spendThisMonth().then(setSpend, setError);
    api<TaskPage>('GET', '/api/v1/jobs/list?limit=5').then(setRecent, setError);
  }, []);
  const month = new Date().toLocaleString(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  return (
    <Page title="Home">
      <ErrorBox error={error} />
      <div class="stats">
        <div class="card stat">
          <h2>Balance</h2>
          {balance ? (
            <p class="figure" data-testid="balance">
              {balance.balance} <span class="unit">USD</span>
            </p>
          ) : (
            <Loading what="the balance" />
          )}
          <a href={settings().topUpUrl}>Top up</a>
        </div>
        <div class="card stat">
          <h2>Spent in {month} (UTC)</h2>
          {spend ? (
            <p class="figure" data-testid="spend">
              {usd(spend.micros)} <span class="unit">USD</span>
            </p>
          ) : (
            <Loading what="the spend" />
          )}
          {spend && (
            <small class="muted">
              {spend.tasks} task{spend.tasks === 1 ? '' : 's'}, charges less refunds · <a href="/usage">Usage</a>
            </small>
          )}
        </div>
      </div>
      <h2>Recent tasks</h2>
      {!recent ? (
        <Loading what="tasks" />
      ) : recent.items.length === 0 ? (
        <Empty>
          No tasks yet. <a href="/playground">Try a model in the playground</a>.
        </Empty>
      ) : (
        <>
          <TaskTable tasks={recent.items} caption="Recent tasks" />
          <p>
            <a href="/tasks">All tasks</a>
          </p>
        </>
      )}
    </Page>
  );
}
