// Tasks: filters (state, model, dates) kept in the URL, pages of 20 (keyset: the API's nextBefore).
import { useEffect, useState } from 'preact/hooks';
import { api, loadModels, type ModelEntry, type TaskPage } from '../api.js';
import { navigate } from '../router.js';
import { TaskTable } from '../tasklist.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';

const STATES = ['waiting', 'queuing', 'generating', 'success', 'fail'];

/** A yyyy-mm-dd of a date input as local midnight in ms; `end` gives the next day's midnight (the day included). */
function dayMs(day: string, end: boolean): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (end ? 1 : 0)).getTime();
}

export function TaskList({ query }: { query: URLSearchParams }) {
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [page, setPage] = useState<TaskPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const state = query.get('state') ?? '';
  const model = query.get('model') ?? '';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const before = query.get('before') ?? '';
  const key = query.toString();

  useEffect(() => void loadModels().then(setModels, setError), []);
  useEffect(() => {
    const q = new URLSearchParams({ limit: '20' });
    if (state) q.set('state', state);
    if (model) q.set('model', model);
    const since = dayMs(from, false);
    const until = dayMs(to, true);
    if (since !== null) q.set('since', String(since));
    if (until !== null) q.set('until', String(until));
    if (before) q.set('before', before);
    setPage(null);
    setError(null);
    api<TaskPage>('GET', `/api/v1/jobs/list?${q}`).then(setPage, setError);
  }, [key]);

  const go = (changes: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v) q.set(k, v);
      else q.delete(k);
    }
    const text = q.toString();
    navigate(`/tasks${text ? `?${text}` : ''}`);
  };
  const filter = (name: string) => (e: Event) => go({ [name]: (e.target as HTMLInputElement).value, before: '' });
  const filtered = Boolean(state || model || from || to);

  return (
    <Page title="Tasks">
      <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <div class="field">
          <label for="f-state">State</label>
          <select id="f-state" value={state} onChange={filter('state')}>
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-model">Model</label>
          <select id="f-model" value={model} onChange={filter('model')}>
            <option value="">Any model</option>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-from">Created from</label>
          <input id="f-from" type="date" value={from} onChange={filter('from')} />
        </div>
        <div class="field">
          <label for="f-to">Created to (included)</label>
          <input id="f-to" type="date" value={to} onChange={filter('to')} />
        </div>
        {filtered && (
          <button type="button" class="link" onClick={() => navigate('/tasks')}>
            Clear filters
          </button>
        )}
      </form>
      <ErrorBox error={error} title="The tasks cannot be listed" />
      {!page && !error && <Loading what="tasks" />}
      {page && page.items.length === 0 && (
        <Empty>
          {filtered ? (
            'No task matches these filters.'
          ) : (
            <span>
              No tasks yet. <a href="/playground">Run one in the playground</a>.
            </span>
          )}
        </Empty>
      )}
      {page && page.items.length > 0 && <TaskTable tasks={page.items} caption="Tasks" />}
      <nav class="pager" aria-label="Pages">
        {before && (
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
