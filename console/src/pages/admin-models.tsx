// Operator: every model with its switch (enable or disable), the price in force, and its routes: breaker, failures in a row, kie.ai credit, tasks in use.
import { api, type ModelEntry } from '../api.js';
import { ErrorBox, Loading, Page } from '../ui.js';
import { AdminNav, useAction, useAdmin } from './admin-shared.js';
import type { Dashboard } from './admin-dashboard.js';

interface ModelSwitch {
  id: string;
  enabled: boolean;
  catalogEnabled: boolean;
  switchedAt: number | null;
}

interface RouteStatus {
  model: string;
  route: string;
  backend: string;
  state: 'closed' | 'open' | 'half-open';
  failuresInRow: number;
  account: { credit: number | null; minCredit: number | null; low: boolean; readAt: number | null } | null;
}

const BREAKER: Record<RouteStatus['state'], [string, string]> = {
  closed: ['state-success', 'healthy (breaker closed)'],
  'half-open': ['state-queuing', 'trying again (half-open)'],
  open: ['off', 'failing (breaker open)'],
};

export function AdminModels() {
  const catalog = useAdmin<ModelEntry[]>('/api/v1/models');
  const switches = useAdmin<ModelSwitch[]>('/admin/v1/models');
  const routes = useAdmin<RouteStatus[]>('/admin/v1/routes');
  const load = useAdmin<Dashboard>('/admin/v1/dashboard?minutes=5');
  const action = useAction();
  const flip = (m: ModelSwitch) =>
    action.run(`${m.id} is ${m.enabled ? 'disabled: createTask answers 505 and the playground says so' : 'enabled'}.`, async () => {
      await api('POST', `/admin/v1/models/${encodeURIComponent(m.id)}/${m.enabled ? 'disable' : 'enable'}`);
      switches.reload();
      catalog.reload();
    });
  /** Tasks handed to a route and not final (queuing upstream or generating): its concurrency in use. */
  const inUseOn = (model: string, routeIndex: number) =>
    (load.data?.active ?? []).filter((a) => a.model === model && a.routeIndex === routeIndex && a.state !== 'waiting').reduce((n, a) => n + a.count, 0);
  const error = switches.error ?? catalog.error ?? routes.error;

  return (
    <Page title="Models">
      <AdminNav />
      <ErrorBox error={error} title="The models cannot be read" />
      <ErrorBox error={action.error} title="Refused" />
      {action.ok && (
        <p class="alert info" role="status">
          {action.ok}
        </p>
      )}
      {(!switches.data || !catalog.data) && !error && <Loading what="models" />}
      {switches.data && catalog.data && (
        <table class="tasks">
          <caption class="sr-only">Models</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Price in force</th>
              <th scope="col">Routes</th>
              <th scope="col">Switch</th>
            </tr>
          </thead>
          <tbody>
            {switches.data.map((m) => {
              const entry = catalog.data!.find((e) => e.id === m.id);
              const own = (routes.data ?? []).filter((r) => r.model === m.id);
              return (
                <tr key={m.id} data-model={m.id}>
                  <td data-label="Model">
                    <strong>{m.id}</strong>
                    {entry && <div class="muted small">{entry.title}</div>}
                    {m.enabled !== m.catalogEnabled && <div class="muted small">catalog default: {m.catalogEnabled ? 'enabled' : 'disabled'}</div>}
                  </td>
                  <td data-label="Price in force">{entry?.pricing.display ?? '—'}</td>
                  <td data-label="Routes">
                    {own.length === 0 && (
                      <span class="muted">
                        {routes.data ? 'the local backend' : '…'}
                        <span class="small"> · in use: {inUseOn(m.id, 0)}</span>
                      </span>
                    )}
                    <ul class="plain">
                      {own.map((r, i) => {
                        const [cls, words] = BREAKER[r.state];
                        return (
                          <li key={r.route}>
                            <code>{r.route}</code> ({r.backend}) <span class={`badge ${cls}`}>{words}</span>
                            {r.failuresInRow > 0 && <span class="muted small"> {r.failuresInRow} failures in a row</span>}
                            {r.account && (
                              <span class="small">
                                {' '}
                                · kie.ai credit {r.account.credit ?? 'not read yet'}
                                {r.account.low && <span class="badge off">below {r.account.minCredit}: skipped</span>}
                              </span>
                            )}
                            <span class="small"> · in use: {inUseOn(m.id, i)}</span>
                          </li>
                        );
                      })}
                    </ul>
                  </td>
                  <td data-label="Switch">
                    <span class={`badge ${m.enabled ? 'state-success' : 'off'}`}>{m.enabled ? 'enabled' : 'disabled'}</span>{' '}
                    <button
                      class={m.enabled ? 'danger' : 'primary'}
                      onClick={() => flip(m)}
                      disabled={action.busy}
                      aria-label={`${m.enabled ? 'Disable' : 'Enable'} ${m.id}`}
                    >
                      {m.enabled ? 'Disable' : 'Enable'}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Page>
  );
}
