// Operator: every account's tasks, filtered by account, state, model, a flag (stuck, leased, failed over) and dates; the filters are in the address.
import { useEffect, useState } from 'preact/hooks';
import { loadModels, type ModelEntry } from '../api.js';
import { usd, when } from '../format.js';
import { navigate } from '../router.js';
import { Empty, ErrorBox, Loading, Page, StateBadge } from '../ui.js';
import { AdminNav, useAdmin, type OperatorTask } from './admin-shared.js';

const STATES = ['waiting', 'queuing', 'generating', 'success', 'fail'];
const FLAGS: [string, string][] = [
  ['stuck', 'Stuck (past the deadline, not final)'],
  ['leased', 'Leased by a worker now'],
  ['failed_over', 'Failed over to another route'],
];
const FILTERS = ['accountId', 'state', 'model', 'flag', 'from', 'to'];

function dayMs(day: string, end: boolean): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (end ? 1 : 0)).getTime() : null;
}

export function AdminTasks({ query }: { query: URLSearchParams }) {
  const [models, setModels] = useState<ModelEntry[]>([]);
  const get = (k: string) => query.get(k) ?? '';
  const api = new URLSearchParams({ limit: '25' });
  for (const k of ['accountId', 'state', 'model', 'flag', 'before']) if (get(k)) api.set(k, get(k));
  const since = dayMs(get('from'), false);
  const until = dayMs(get('to'), true);
  if (since !== null) api.set('since', String(since));
  if (until !== null) api.set('until', String(until));
  const { data: page, error } = useAdmin<{ items: OperatorTask[]; nextBefore: number | null }>(`/admin/v1/tasks?${api}`);
  useEffect(() => void loadModels().then(setModels, () => setModels([])), []);

  const go = (changes: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v) q.set(k, v);
      else q.delete(k);
    }
    navigate(`/admin/tasks${q.toString() ? `?${q}` : ''}`);
  };
  const filter = (name: string) => (e: Event) => go({ [name]: (e.target as HTMLInputElement).value.trim(), before: '' });
  const filtered = FILTERS.some((k) => get(k));

  return (
    <Page title="All tasks">
      <AdminNav />
      <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <div class="field">
          <label for="t-account">Account id</label>
          <input id="t-account" value={get('accountId')} onChange={filter('accountId')} placeholder="Any account" />
        </div>
        <div class="field">
          <label for="t-state">State</label>
          <select id="t-state" value={get('state')} onChange={filter('state')}>
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="t-flag">Only</label>
          <select id="t-flag" value={get('flag')} onChange={filter('flag')}>
            <option value="">Every task</option>
            {FLAGS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="t-model">Model</label>
          <select id="t-model" value={get('model')} onChange={filter('model')}>
            <option value="">Any model</option>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="t-from">Created from</label>
          <input id="t-from" type="date" value={get('from')} onChange={filter('from')} />
        </div>
        <div class="field">
          <label for="t-to">Created to (included)</label>
          <input id="t-to" type="date" value={get('to')} onChange={filter('to')} />
        </div>
        {filtered && (
          <button type="button" class="link" onClick={() => navigate('/admin/tasks')}>
            Clear filters
          </button>
        )}
      </form>
      <ErrorBox error={error} title="The tasks cannot be listed" />
      {!page && !error && <Loading what="tasks" />}
      {page && page.items.length === 0 && <Empty>{filtered ? 'No task matches these filters.' : 'No tasks yet.'}</Empty>}
      {page && page.items.length > 0 && (
        <table class="tasks" data-testid="admin-tasks">
          <caption class="sr-only">Tasks of every account</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Account</th>
              <th scope="col">Model</th>
              <th scope="col">State</th>
              <th scope="col">Engine</th>
              <th scope="col">Created</th>
              <th scope="col" class="num">
                Charge (USD)
              </th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((t) => (
              <tr key={t.taskId}>
                <td data-label="Task">
                  <code>{t.taskId}</code>
                </td>
                <td data-label="Account">
                  <a href={`/admin/accounts/${encodeURIComponent(t.accountId)}`}>
                    <code>{t.accountId}</code>
                  </a>
                </td>
                <td data-label="Model">{t.model}</td>
                <td data-label="State">
                  <StateBadge state={t.state} /> {t.stuck && <span class="badge off">stuck</span>} {t.leased && <span class="badge">leased</span>}{' '}
                  {t.failedOver && <span class="badge">failed over</span>}
                  {t.failMsg && (
                    <div class="muted small">
                      {t.failCode ? `${t.failCode}: ` : ''}
                      {t.failMsg}
                    </div>
                  )}
                </td>
                <td data-label="Engine">
                  {t.backend} · route {t.routeIndex + 1} · {t.attempts} {t.attempts === 1 ? 'attempt' : 'attempts'}
                  {t.leased && (
                    <div class="muted small">
                      held by {t.lockedBy} until {when(t.lockedUntil)}
                    </div>
                  )}
                  {t.lastError && <div class="muted small">last error: {t.lastError}</div>}
                </td>
                <td data-label="Created">{when(t.createTime)}</td>
                <td data-label="Charge (USD)" class="num">
                  {usd(t.priceMicros)}
                  {t.refunded && <span class="badge refunded">refunded</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {get('before') && (
          <button class="secondary" onClick={() => go({ before: '' })}>
            First page
          </button>
        )}
        {page?.nextBefore && (
          <button class="secondary" onClick={() => go({ before: String(page.nextBefore) })}>
            Next page
          </button>
        )}
      </nav>
    </Page>
  );
}
