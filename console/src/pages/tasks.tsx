// Tasks: filters (state, model, dates) kept in the URL, pages of 20 (keyset: the API's nextBefore).
import { useEffect, useState } from 'preact/hooks';
import { api, type TaskPage } from '../api.js';
import { DateFields, FilterForm, ModelField, Pager, StateField, listAddress } from '../task-filters.js';
import { TaskTable } from '../tasklist.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';

export function TaskList({ query }: { query: URLSearchParams }) {
  const [page, setPage] = useState<TaskPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const list = listAddress(query, '/tasks');
  const key = query.toString();

  useEffect(() => {
    // A filter changed quickly twice: only the answer for the address shown now may land.
    let live = true;
    setPage(null);
    setError(null);
    api<TaskPage>('GET', `/api/v1/jobs/list?${list.apiQuery(['state', 'model', 'before'], 20)}`).then(
      (p) => live && setPage(p),
      (e) => live && setError(e),
    );
    return () => void (live = false);
  }, [key]);
  const filtered = list.any(['state', 'model', 'from', 'to']);

  return (
    <Page title="Tasks">
      <FilterForm path="/tasks" filtered={filtered}>
        <StateField id="f" list={list} />
        <ModelField id="f" list={list} />
        <DateFields id="f" list={list} />
      </FilterForm>
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
      <Pager list={list} nextBefore={page?.nextBefore} />
    </Page>
  );
}
