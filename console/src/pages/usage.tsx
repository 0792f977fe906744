// Usage: spend per UTC day (a chart, uPlot loaded on this page only) and per model, with CSV downloads.
// Only GET /api/v1/usage (decision 1906); every figure is the API's own text.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { navigate } from '../router.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';

interface Figures {
  spent: string;
  charged: string;
  refunded: string;
  spentMicros: number;
  tasks: number;
}

export interface UsageReport {
  from: string;
  to: string;
  group: 'day' | 'model' | 'key';
  total: Figures;
  rows: (Figures & { day?: string; model?: string; keyId?: string | null; keyName?: string | null })[];
}

function DayChart({ rows }: { rows: UsageReport['rows'] }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let remove: (() => void) | null = null;
    let gone = false;
    import('../chart.js').then(
      ({ drawDays }) => {
        if (gone || !box.current) return;
        remove = drawDays(
          box.current,
          rows.map((r) => r.day!),
          rows.map((r) => r.spentMicros),
        );
      },
      () => setError(new Error('the chart could not be loaded; the figures are in the table below')),
    );
    return () => {
      gone = true;
      remove?.();
    };
  }, [rows]);
  return (
    <>
      <ErrorBox error={error} title="No chart" />
      <div
        ref={box}
        class="chart"
        data-testid="day-chart"
        role="img"
        aria-label="Bar chart of the spend per UTC day; the same figures are in the table below"
      />
    </>
  );
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.max(0, Math.min(100, (part / whole) * 100)) : 0);

export function Usage({ query }: { query: URLSearchParams }) {
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const [days, setDays] = useState<UsageReport | null>(null);
  const [models, setModels] = useState<UsageReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const period = new URLSearchParams();
  if (from) period.set('from', from);
  if (to) period.set('to', to);
  useEffect(() => {
    setDays(null);
    setModels(null);
    setError(null);
    api<UsageReport>('GET', `/api/v1/usage?${period}&group=day`).then(setDays, setError);
    api<UsageReport>('GET', `/api/v1/usage?${period}&group=model`).then(setModels, setError);
  }, [from, to]);
  const go = (name: string) => (e: Event) => {
    const next = new URLSearchParams(query);
    const v = (e.target as HTMLInputElement).value;
    if (v) next.set(name, v);
    else next.delete(name);
    navigate(`/usage${next.size ? `?${next}` : ''}`);
  };
  const csv = (group: string) => `/api/v1/usage?${period}${period.size ? '&' : ''}group=${group}&format=csv`;
  const maxModel = Math.max(0, ...(models?.rows.map((r) => r.spentMicros) ?? []));
  return (
    <Page title="Usage">
      <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Period">
        <div class="field">
          <label for="u-from">From (UTC day)</label>
          <input id="u-from" type="date" value={from} onChange={go('from')} />
        </div>
        <div class="field">
          <label for="u-to">To (UTC day, included)</label>
          <input id="u-to" type="date" value={to} onChange={go('to')} />
        </div>
        <p class="muted">{from || to ? '' : 'The last 30 UTC days, today included.'}</p>
      </form>
      <ErrorBox error={error} title="The usage cannot be read" />
      {!days && !error && <Loading what="the usage" />}
      {days && (
        <>
          <p>
            Spent from {days.from.slice(0, 10)} to {new Date(Date.parse(days.to) - 1).toISOString().slice(0, 10)} (UTC):{' '}
            <strong class="figure-inline" data-testid="usage-total">
              {days.total.spent} USD
            </strong>{' '}
            <span class="muted">
              ({days.total.charged} charged, {days.total.refunded} refunded, {days.total.tasks} task{days.total.tasks === 1 ? '' : 's'})
            </span>
          </p>
          <p class="row">
            Download CSV:{' '}
            <a href={csv('day')} download="usage-per-day.csv">
              per day
            </a>
            <a href={csv('model')} download="usage-per-model.csv">
              per model
            </a>
            <a href={csv('key')} download="usage-per-key.csv">
              per key
            </a>
          </p>
          {days.total.tasks === 0 && days.total.spentMicros === 0 ? (
            <Empty>
              Nothing was spent in this period. <a href="/playground">Try a model in the playground</a>.
            </Empty>
          ) : (
            <>
              <h2>Per day</h2>
              <DayChart rows={days.rows} />
              <details>
                <summary>The figures per day</summary>
                <table class="tasks" data-testid="day-table">
                  <caption class="sr-only">Spend per UTC day</caption>
                  <thead>
                    <tr>
                      <th scope="col">Day (UTC)</th>
                      <th scope="col" class="num">
                        Spent (USD)
                      </th>
                      <th scope="col" class="num">
                        Tasks
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {days.rows
                      .filter((r) => r.tasks > 0 || r.spentMicros !== 0)
                      .map((r) => (
                        <tr key={r.day}>
                          <td data-label="Day">{r.day}</td>
                          <td data-label="Spent (USD)" class="num">
                            {r.spent}
                          </td>
                          <td data-label="Tasks" class="num">
                            {r.tasks}
                          </td>
                        </tr>
                      ))}
                  </tbody>
                </table>
              </details>
              <h2>Per model</h2>
              {!models ? (
                <Loading what="the spend per model" />
              ) : (
                <ul class="bars" data-testid="model-bars">
                  {models.rows.map((r) => (
                    <li key={r.model}>
                      <span class="bar-label">
                        <code>{r.model}</code> <strong>{r.spent} USD</strong>{' '}
                        <span class="muted">
                          {r.tasks} task{r.tasks === 1 ? '' : 's'}
                        </span>
                      </span>
                      <span class="bar" aria-hidden="true">
                        <span style={{ width: `${pct(r.spentMicros, maxModel)}%` }} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
    </Page>
  );
}
