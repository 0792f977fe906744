// Home: balance, spend this month, recent tasks.
import { useEffect, useState } from 'preact/hooks';
import { api, settings, type TaskPage } from '../api.js';
import { microsOf, monthStartUtc, usd } from '../format.js';
import { TaskTable } from '../tasklist.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';

interface Spend {
  micros: number;
  tasks: number;
  complete: boolean;
}

const SPEND_PAGES = 20;

/**
 * What this month's tasks were charged less their refunds (creditsConsumed is the charge left on
 * a task), summed in micro-USD: the same as the ledger's task entries of the month. Up to 2,000
 * tasks are read (20 pages of 100); past that the figure says "at least".
 */
async function spendThisMonth(): Promise<Spend> {
  const since = monthStartUtc();
  let micros = 0;
  let tasks = 0;
  let before: number | null = null;
  for (let i = 0; i < SPEND_PAGES; i++) {
    const page: TaskPage = await api<TaskPage>('GET', `/api/v1/jobs/list?limit=100&since=${since}${before ? `&before=${before}` : ''}`);
    for (const t of page.items) micros += microsOf(t.creditsConsumed);
    tasks += page.items.length;
    before = page.nextBefore;
    if (before === null) return { micros, tasks, complete: true };
  }
  return { micros, tasks, complete: false };
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
              {spend.complete ? '' : 'at least '}
              {usd(spend.micros)} <span class="unit">USD</span>
            </p>
          ) : (
            <Loading what="the spend" />
          )}
          {spend && (
            <small class="muted">
              {spend.tasks} task{spend.tasks === 1 ? '' : 's'}, charges less refunds
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
