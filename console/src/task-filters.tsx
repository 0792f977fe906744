// The filters and pager both task lists share (the customer's /tasks, the operator's /admin/tasks):
// the values live in the address, so every change is a navigation and a list can be linked to.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { loadModels, type ModelEntry, type TaskState } from './api.js';
import { navigate } from './router.js';

const STATES: TaskState[] = ['waiting', 'queuing', 'generating', 'success', 'fail'];

/** A yyyy-mm-dd of a date input as local midnight in ms; `end` gives the next day's midnight (the day included). */
function dayMs(day: string, end: boolean): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (end ? 1 : 0)).getTime() : null;
}

export interface ListAddress {
  /** A value of the address ('' when absent). */
  get(name: string): string;
  /** Navigates to the list with these values changed ('' removes one). */
  go(changes: Record<string, string>): void;
  /** An input's change handler: sets the filter `name` and goes back to the first page. */
  filter(name: string): (e: Event) => void;
  /** Whether any of `names` is set. */
  any(names: string[]): boolean;
  /**
   * The list API's query: `limit`, the values of `names` the address has, and the dates `from`
   * and `to` as `since` and `until` (the last day included).
   */
  apiQuery(names: string[], limit: number): URLSearchParams;
}

/** The filters of the task list at `path`, read from and written to the address. */
export function listAddress(query: URLSearchParams, path: string): ListAddress {
  const get = (name: string) => query.get(name) ?? '';
  const go = (changes: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v) q.set(k, v);
      else q.delete(k);
    }
    const text = q.toString();
    navigate(`${path}${text ? `?${text}` : ''}`);
  };
  return {
    get,
    go,
    filter: (name) => (e) => go({ [name]: (e.target as HTMLInputElement).value.trim(), before: '' }),
    any: (names) => names.some((n) => get(n)),
    apiQuery: (names, limit) => {
      const q = new URLSearchParams({ limit: String(limit) });
      for (const n of names) if (get(n)) q.set(n, get(n));
      const since = dayMs(get('from'), false);
      const until = dayMs(get('to'), true);
      if (since !== null) q.set('since', String(since));
      if (until !== null) q.set('until', String(until));
      return q;
    },
  };
}

/** The filters form: the fields given, then "Clear filters" (back to `path`) while `filtered`. */
export function FilterForm({ path, filtered, children }: { path: string; filtered: boolean; children: ComponentChildren }) {
  return (
    <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
      {children}
      {filtered && (
        <button type="button" class="link" onClick={() => navigate(path)}>
          Clear filters
        </button>
      )}
    </form>
  );
}

/** A select of the task states (`id-state`). */
export function StateField({ id, list }: { id: string; list: ListAddress }) {
  return (
    <div class="field">
      <label for={`${id}-state`}>State</label>
      <select id={`${id}-state`} value={list.get('state')} onChange={list.filter('state')}>
        <option value="">Any state</option>
        {STATES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A select of the models (`id-model`), read once per page load; without them only "Any model". */
export function ModelField({ id, list }: { id: string; list: ListAddress }) {
  const [models, setModels] = useState<ModelEntry[]>([]);
  useEffect(() => void loadModels().then(setModels, () => setModels([])), []);
  return (
    <div class="field">
      <label for={`${id}-model`}>Model</label>
      <select id={`${id}-model`} value={list.get('model')} onChange={list.filter('model')}>
        <option value="">Any model</option>
        {models.map((m) => (
          <option key={m.id} value={m.id}>
            {m.id}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The creation dates `from` and `to` (`id-from`, `id-to`), the last day included. */
export function DateFields({ id, list }: { id: string; list: ListAddress }) {
  return (
    <>
      <div class="field">
        <label for={`${id}-from`}>Created from</label>
        <input id={`${id}-from`} type="date" value={list.get('from')} onChange={list.filter('from')} />
      </div>
      <div class="field">
        <label for={`${id}-to`}>Created to (included)</label>
        <input id={`${id}-to`} type="date" value={list.get('to')} onChange={list.filter('to')} />
      </div>
    </>
  );
}

/** Keyset paging: back to the first page, or on to the page after `nextBefore`. */
export function Pager({ list, nextBefore }: { list: ListAddress; nextBefore: number | null | undefined }) {
  return (
    <nav class="pager" aria-label="Pages">
      {list.get('before') && (
        <button class="secondary" onClick={() => list.go({ before: '' })}>
          First page
        </button>
      )}
      {nextBefore && (
        <button class="secondary" onClick={() => list.go({ before: String(nextBefore) })}>
          Next page
        </button>
      )}
    </nav>
  );
}
