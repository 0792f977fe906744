// Operator: every account, searched by name or id (the search is in the address), and a new account with its first key.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { usd, when } from '../format.js';
import { navigate } from '../router.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';
import { AdminNav, useAction, useAdmin, type Account } from './admin-shared.js';

export function AdminAccounts({ query }: { query: URLSearchParams }) {
  const q = query.get('q') ?? '';
  const { data, error, reload } = useAdmin<Account[]>('/admin/v1/accounts');
  const [name, setName] = useState('');
  const [balance, setBalance] = useState('');
  const [created, setCreated] = useState<{ account: Account; apiKey: string } | null>(null);
  const action = useAction();
  const needle = q.trim().toLowerCase();
  const shown = (data ?? []).filter((a) => !needle || a.name.toLowerCase().includes(needle) || a.id.toLowerCase().includes(needle));

  const create = async (e: Event) => {
    e.preventDefault();
    const r = await action.run('Account created.', () =>
      api<{ account: Account; apiKey: string }>('POST', '/admin/v1/accounts', { name: name.trim(), ...(balance.trim() ? { balance: balance.trim() } : {}) }),
    );
    if (r) {
      setCreated(r);
      setName('');
      setBalance('');
      reload();
    }
  };

  return (
    <Page title="Accounts">
      <AdminNav />
      <form class="filters card" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="a-search">Search accounts</label>
          <input
            id="a-search"
            type="search"
            value={q}
            placeholder="Name or id"
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              navigate(v ? `/admin/accounts?q=${encodeURIComponent(v)}` : '/admin/accounts', { replace: true });
            }}
          />
        </div>
        {data && (
          <p class="muted" role="status">
            {shown.length} of {data.length} accounts
          </p>
        )}
      </form>
      <ErrorBox error={error} title="The accounts cannot be listed" />
      {!data && !error && <Loading what="accounts" />}
      {data && shown.length === 0 && <Empty>{needle ? `No account matches “${q}”.` : 'No accounts yet: create the first one below.'}</Empty>}
      {shown.length > 0 && (
        <table class="tasks">
          <caption class="sr-only">Accounts</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Id</th>
              <th scope="col">Status</th>
              <th scope="col">Dialect</th>
              <th scope="col">Created</th>
              <th scope="col" class="num">
                Balance (USD)
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((a) => (
              <tr key={a.id}>
                <td data-label="Account">
                  <a href={`/admin/accounts/${encodeURIComponent(a.id)}`}>{a.name}</a>
                </td>
                <td data-label="Id">
                  <code>{a.id}</code>
                </td>
                <td data-label="Status">
                  <span class={`badge ${a.status === 'active' ? 'state-success' : 'off'}`}>{a.status}</span>
                </td>
                <td data-label="Dialect">{a.dialect}</td>
                <td data-label="Created">{when(Date.parse(a.createdAt))}</td>
                <td data-label="Balance (USD)" class="num">
                  {usd(a.balanceMicros)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>New account</h2>
      <form class="card narrow" onSubmit={create}>
        <div class="field">
          <label for="n-name">Account name</label>
          <input id="n-name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="n-balance">Opening balance (USD, optional)</label>
          <input id="n-balance" inputMode="decimal" placeholder="0" value={balance} onInput={(e) => setBalance((e.target as HTMLInputElement).value)} />
        </div>
        <ErrorBox error={action.error} title="Not created" />
        <button class="primary" type="submit" disabled={action.busy}>
          Create the account
        </button>
      </form>
      {created && (
        <div class="card" role="status">
          <p>
            <strong>{created.account.name}</strong> is created. Its first API key, shown only now:
          </p>
          <pre class="secret" data-testid="new-account-key">
            {created.apiKey}
          </pre>
          <a href={`/admin/accounts/${encodeURIComponent(created.account.id)}`}>Open {created.account.name}</a>
        </div>
      )}
    </Page>
  );
}
