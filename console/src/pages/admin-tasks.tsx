// Operator: every account's tasks, filtered by account, state, model, a flag (stuck, leased, failed over) and dates; the filters are in the address.
import { usd, when } from '../format.js';
import { DateFields, FilterForm, ModelField, Pager, StateField, listAddress } from '../task-filters.js';
import { Empty, ErrorBox, Loading, Page, StateBadge } from '../ui.js';
import { AdminNav, useAdmin, type OperatorTask } from './admin-shared.js';

const FLAGS: [string, string][] = [
  ['stuck', 'Stuck (past the deadline, not final)'],
  ['leased', 'Leased by a worker now'],
  ['failed_over', 'Failed over to another route'],
];

export function AdminTasks({ query }: { query: URLSearchParams }) {
  const list = listAddress(query, '/admin/tasks');
  const api = list.apiQuery(['accountId', 'state', 'model', 'flag', 'before'], 25);
  const { data: page, error } = useAdmin<{ items: OperatorTask[]; nextBefore: number | null }>(`/admin/v1/tasks?${api}`);
  const filtered = list.any(['accountId', 'state', 'model', 'flag', 'from', 'to']);

  return (
    <Page title="All tasks">
      <AdminNav />
      <FilterForm path="/admin/tasks" filtered={filtered}>
        <div class="field">
          <label for="t-account">Account id</label>
          <input id="t-account" value={list.get('accountId')} onChange={list.filter('accountId')} placeholder="Any account" />
        </div>
        <StateField id="t" list={list} />
        <div class="field">
          <label for="t-flag">Only</label>
          <select id="t-flag" value={list.get('flag')} onChange={list.filter('flag')}>
            <option value="">Every task</option>
            {FLAGS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <ModelField id="t" list={list} />
        <DateFields id="t" list={list} />
      </FilterForm>
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
      <Pager list={list} nextBefore={page?.nextBefore} />
    </Page>
  );
}
