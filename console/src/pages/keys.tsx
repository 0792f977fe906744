// API keys: the account's keys with their spend; create one (name, scopes, models, budget, expiry; the secret shown once); revoke.
// Only GET/POST /api/v1/keys and POST /api/v1/keys/:id/revoke (decision 1907).
import { useEffect, useState } from 'preact/hooks';
import { api, loadModels, type ModelEntry } from '../api.js';
import { when } from '../format.js';
import { ConfirmButton, Empty, ErrorBox, Loading, Page, useAction } from '../ui.js';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[] | null;
  models: string[] | null;
  expiresAt: string | null;
  budget: { amount: string; period: 'total' | 'day' | 'month' } | null;
  spent: string;
  remaining: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdBy: string | null;
}

/** The scopes a key may have (src/accounts/keys.ts SCOPES), with what each allows. */
const SCOPES: [string, string][] = [
  ['tasks:write', 'create and cancel tasks'],
  ['tasks:read', 'read tasks'],
  ['files:write', 'upload files'],
  ['balance:read', 'read the balance, usage and top-ups'],
  ['billing', 'top up, webhook secret, alerts'],
  ['keys:read', 'list keys'],
  ['keys:write', 'create and revoke keys'],
];

const PERIODS = [
  ['total', 'in total'],
  ['day', 'per UTC day'],
  ['month', 'per UTC month'],
] as const;

const ms = (iso: string | null) => (iso ? Date.parse(iso) : null);

function NewKeyForm({ models, onMade }: { models: ModelEntry[]; onMade: (secret: string, key: ApiKeyView) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [amount, setAmount] = useState('');
  const [period, setPeriod] = useState('total');
  const [expires, setExpires] = useState('');
  const { busy, error, run } = useAction();
  const toggle = (list: string[], set: (v: string[]) => void, v: string) => set(list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const body: Record<string, unknown> = { name };
      if (scopes.length) body.scopes = scopes;
      if (chosen.length) body.models = chosen;
      if (amount.trim()) body.budget = { amount: amount.trim(), period };
      if (expires) body.expiresAt = `${expires}T00:00:00Z`;
      const made = await api<{ key: ApiKeyView; apiKey: string }>('POST', '/api/v1/keys', body);
      onMade(made.apiKey, made.key);
      setName('');
      setScopes([]);
      setChosen([]);
      setAmount('');
      setPeriod('total');
      setExpires('');
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key</h2>
      <ErrorBox error={error} title="Not created" />
      <div class="field">
        <label for="k-name">Name</label>
        <input id="k-name" required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </div>
      <fieldset class="choices">
        <legend>Scopes (none ticked: every scope)</legend>
        {SCOPES.map(([s, what]) => (
          <label key={s} class="choice">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(scopes, setScopes, s)} />
            <code>{s}</code> <span class="muted">{what}</span>
          </label>
        ))}
      </fieldset>
      <fieldset class="choices models-choice">
        <legend>Models (none ticked: every model)</legend>
        {models.map((m) => (
          <label key={m.id} class="choice">
            <input type="checkbox" checked={chosen.includes(m.id)} onChange={() => toggle(chosen, setChosen, m.id)} />
            {m.id}
          </label>
        ))}
      </fieldset>
      <div class="filters">
        <div class="field">
          <label for="k-budget">Budget in USD (empty: none)</label>
          <input id="k-budget" inputMode="decimal" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="k-period">Budget period</label>
          <select id="k-period" value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value)}>
            {PERIODS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="k-expires">Expires on (UTC, empty: never)</label>
          <input id="k-expires" type="date" value={expires} onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create the key'}
      </button>
    </form>
  );
}

function RevokeButton({ k, onRevoked }: { k: ApiKeyView; onRevoked: () => void }) {
  if (k.revokedAt) return <span class="badge off">revoked {when(ms(k.revokedAt))}</span>;
  const revoke = async () => {
    await api('POST', `/api/v1/keys/${encodeURIComponent(k.id)}/revoke`);
    onRevoked();
  };
  return <ConfirmButton label="Revoke" name={`Revoke ${k.name}`} run={revoke} errorTitle="Not revoked" />;
}

export function Keys() {
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [made, setMade] = useState<{ secret: string; name: string } | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api<ApiKeyView[]>('GET', '/api/v1/keys').then(setKeys, setError);
  }, [tick]);
  useEffect(() => void loadModels().then(setModels, () => {}), []);
  const budget = (k: ApiKeyView) =>
    k.budget ? `${k.spent} of ${k.budget.amount} ${PERIODS.find((p) => p[0] === k.budget!.period)?.[1] ?? k.budget.period}` : `${k.spent} (no budget)`;
  return (
    <Page title="API keys">
      <p class="muted">
        Keys call the API from scripts and servers. Each key can be limited to some scopes and models, a budget and an expiry; revoking one revokes the keys it
        made.
      </p>
      {made && (
        <div class="card" role="status">
          <h2>The new key “{made.name}”</h2>
          <p>Copy it now: it is shown only this once.</p>
          <pre class="secret" data-testid="new-key" tabIndex={0} aria-label="The new API key">
            {made.secret}
          </pre>
          <button onClick={() => setMade(null)}>I have copied it</button>
        </div>
      )}
      <NewKeyForm
        models={models}
        onMade={(secret, key) => {
          setMade({ secret, name: key.name });
          setTick(tick + 1);
        }}
      />
      <h2>The account's keys</h2>
      <ErrorBox error={error} title="The keys cannot be listed" />
      {!keys && !error && <Loading what="keys" />}
      {keys && keys.length === 0 && <Empty>No keys yet. Create one above.</Empty>}
      {keys && keys.length > 0 && (
        <table class="tasks keys">
          <caption class="sr-only">The account's API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Models</th>
              <th scope="col">Spent (USD)</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Revoke</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-key-id={k.id}>
                <td data-label="Name">{k.name}</td>
                <td data-label="Key">
                  <code>{k.prefix}</code>
                </td>
                <td data-label="Scopes">{k.scopes ? k.scopes.join(', ') : 'every scope'}</td>
                <td data-label="Models">{k.models ? k.models.join(', ') : 'every model'}</td>
                <td data-label="Spent (USD)">{budget(k)}</td>
                <td data-label="Expires">{k.expiresAt ? when(ms(k.expiresAt)) : 'never'}</td>
                <td data-label="Last used">{when(ms(k.lastUsedAt))}</td>
                <td data-label="Revoke">
                  <RevokeButton k={k} onRevoked={() => setTick(tick + 1)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
