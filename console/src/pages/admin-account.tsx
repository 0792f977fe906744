// Operator: one account. Top up, adjust (credit or debit with a reason), disable or enable, dialect; its keys, members and ledger.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { usd, when } from '../format.js';
import { Empty, ErrorBox, Loading, Page } from '../ui.js';
import { AdminNav, useAction, useAdmin, type Account, type ApiKey, type LedgerEntry, type Member } from './admin-shared.js';

const KINDS: Record<LedgerEntry['kind'], string> = {
  topup: 'Top-up',
  charge: 'Charge',
  refund: 'Refund',
  partial_refund: 'Partial refund',
  adjustment: 'Adjustment',
};

function MoneyForm({
  id,
  label,
  amountLabel,
  noteLabel,
  noteRequired,
  button,
  onSend,
}: {
  id: string;
  label: string;
  amountLabel: string;
  noteLabel: string;
  noteRequired: boolean;
  button: string;
  onSend(amount: string, note: string): Promise<unknown>;
}) {
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const action = useAction();
  const send = async (e: Event) => {
    e.preventDefault();
    if ((await action.run(`${label}: done.`, () => onSend(amount.trim(), note.trim()))) !== null) {
      setAmount('');
      setNote('');
    }
  };
  return (
    <form class="card" onSubmit={send} aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>{label}</h3>
      <div class="field">
        <label for={`${id}-amount`}>{amountLabel}</label>
        <input id={`${id}-amount`} required inputMode="decimal" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
      </div>
      <div class="field">
        <label for={`${id}-note`}>{noteLabel}</label>
        <input id={`${id}-note`} required={noteRequired} maxLength={500} value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
      </div>
      <ErrorBox error={action.error} title="Refused" />
      {action.ok && (
        <p class="alert info" role="status">
          {action.ok}
        </p>
      )}
      <button class="primary" type="submit" disabled={action.busy}>
        {button}
      </button>
    </form>
  );
}

export function AdminAccount({ accountId }: { accountId: string }) {
  const base = `/admin/v1/accounts/${encodeURIComponent(accountId)}`;
  const account = useAdmin<Account>(base);
  const keys = useAdmin<ApiKey[]>(`${base}/keys`);
  const members = useAdmin<Member[]>(`${base}/members`);
  const ledger = useAdmin<LedgerEntry[]>(`${base}/ledger`);
  const status = useAction();
  const [dialect, setDialect] = useState<string>('');
  const a = account.data;
  const changed = () => {
    account.reload();
    ledger.reload();
  };
  const ledgerSum = (ledger.data ?? []).reduce((sum, e) => sum + e.amountMicros, 0);

  const setStatus = () =>
    a &&
    status.run(a.status === 'active' ? 'Disabled: its keys and sessions are refused (403).' : 'Enabled.', async () => {
      await api('POST', `${base}/${a.status === 'active' ? 'disable' : 'enable'}`);
      account.reload();
    });
  const saveDialect = (e: Event) => {
    e.preventDefault();
    void status.run(`Dialect set to ${dialect || a?.dialect}.`, async () => {
      await api('POST', `${base}/dialect`, { dialect: dialect || a?.dialect });
      account.reload();
    });
  };

  return (
    <Page title={a ? `Account ${a.name}` : 'Account'}>
      <AdminNav />
      <ErrorBox error={account.error} title="The account cannot be read" />
      {!a && !account.error && <Loading what="the account" />}
      {a && (
        <>
          <div class="stats">
            <div class="card stat">
              <h2>Balance</h2>
              <p class="figure" data-testid="account-balance">
                {usd(a.balanceMicros)} <span class="unit">USD</span>
              </p>
            </div>
            <div class="card stat">
              <h2>Status</h2>
              <p>
                <span class={`badge ${a.status === 'active' ? 'state-success' : 'off'}`} data-testid="account-status">
                  {a.status}
                </span>
              </p>
              <button class={a.status === 'active' ? 'danger' : 'primary'} onClick={setStatus} disabled={status.busy}>
                {a.status === 'active' ? 'Disable the account' : 'Enable the account'}
              </button>
            </div>
            <form class="card stat" onSubmit={saveDialect}>
              <h2>
                <label for="dialect">Dialect</label>
              </h2>
              <p class="muted">The resultJson shape of the tasks it creates from now on.</p>
              <div class="row">
                <select id="dialect" value={dialect || a.dialect} onChange={(e) => setDialect((e.target as HTMLSelectElement).value)}>
                  <option value="gengate">gengate (SPEC shapes)</option>
                  <option value="kie">kie (resultJson as a string)</option>
                </select>
                <button type="submit" disabled={status.busy}>
                  Save dialect
                </button>
              </div>
            </form>
          </div>
          <ErrorBox error={status.error} title="Refused" />
          {status.ok && (
            <p class="alert info" role="status">
              {status.ok}
            </p>
          )}
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{a.id}</code>
            </dd>
            <dt>Created</dt>
            <dd>{when(Date.parse(a.createdAt))}</dd>
            <dt>Rate limits</dt>
            <dd>
              write {a.limits?.write ?? 'default'}, read {a.limits?.read ?? 'default'}
            </dd>
            <dt>Tasks</dt>
            <dd>
              <a href={`/admin/tasks?accountId=${encodeURIComponent(a.id)}`}>All tasks of {a.name}</a>
            </dd>
          </dl>
          <div class="stats">
            <MoneyForm
              id="topup"
              label="Top up"
              amountLabel="Amount (USD)"
              noteLabel="Note (optional)"
              noteRequired={false}
              button="Top up"
              onSend={async (amount, note) => {
                await api('POST', `${base}/topup`, { amount, ...(note ? { note } : {}) });
                changed();
              }}
            />
            <MoneyForm
              id="adjust"
              label="Adjust"
              amountLabel="Amount (USD: positive credits, negative debits)"
              noteLabel="Reason (shown in the ledger)"
              noteRequired
              button="Adjust"
              onSend={async (amount, reason) => {
                await api('POST', `${base}/adjustments`, { amount, reason });
                changed();
              }}
            />
          </div>
        </>
      )}
      <h2>Members</h2>
      <ErrorBox error={members.error} title="The members cannot be listed" />
      {members.data && members.data.length === 0 && (
        <Empty>
          No members: the account is used with API keys only. Add one with <code>gengate member create</code>.
        </Empty>
      )}
      {members.data && members.data.length > 0 && (
        <ul class="plain">
          {members.data.map((m) => (
            <li key={m.id}>
              {m.email} <span class="badge">{m.role}</span>
            </li>
          ))}
        </ul>
      )}
      <h2>Keys</h2>
      <ErrorBox error={keys.error} title="The keys cannot be listed" />
      {keys.data && keys.data.length === 0 && <Empty>No keys.</Empty>}
      {keys.data && keys.data.length > 0 && (
        <table class="tasks">
          <caption class="sr-only">Keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id}>
                <td data-label="Name">{k.name || k.id}</td>
                <td data-label="Prefix">
                  <code>{k.prefix}</code>
                </td>
                <td data-label="Scopes">{k.scopes ? k.scopes.join(', ') : 'all'}</td>
                <td data-label="Last used">{k.lastUsedAt ? when(Date.parse(k.lastUsedAt)) : 'never'}</td>
                <td data-label="State">{k.revokedAt ? <span class="badge off">revoked</span> : <span class="badge state-success">active</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Ledger</h2>
      <ErrorBox error={ledger.error} title="The ledger cannot be read" />
      {ledger.data && a && (
        <p class={ledgerSum === a.balanceMicros ? 'alert info' : 'alert error'} data-testid="ledger-check">
          {ledgerSum === a.balanceMicros
            ? `The ${ledger.data.length} entries add up to ${usd(ledgerSum)} USD: the balance.`
            : `The entries add up to ${usd(ledgerSum)} USD but the balance is ${usd(a.balanceMicros)} USD.`}{' '}
          <a href={`${base}/ledger?format=csv`} download>
            Download CSV
          </a>
        </p>
      )}
      {ledger.data && ledger.data.length === 0 && <Empty>No entries yet.</Empty>}
      {ledger.data && ledger.data.length > 0 && (
        <table class="tasks">
          <caption class="sr-only">Ledger, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Reason or task</th>
              <th scope="col" class="num">
                Amount (USD)
              </th>
              <th scope="col" class="num">
                Balance after
              </th>
            </tr>
          </thead>
          <tbody>
            {[...ledger.data].reverse().map((e) => (
              <tr key={e.id}>
                <td data-label="When">{when(Date.parse(e.createdAt))}</td>
                <td data-label="Kind">{KINDS[e.kind] ?? e.kind}</td>
                <td data-label="Reason or task">{e.taskId ? <code>{e.taskId}</code> : e.reason}</td>
                <td data-label="Amount (USD)" class="num">
                  {e.amount}
                </td>
                <td data-label="Balance after" class="num">
                  {e.balanceAfter}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
