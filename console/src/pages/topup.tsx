// Top up: the balance, an amount (the server's presets or any in range) paid through Stripe Checkout, and the account's top-ups.
// Only POST/GET /api/v1/topups and GET /api/v1/user/balance (decision 1904). The balance moves when Stripe's signed event arrives, never on return.
import { useEffect, useState } from 'preact/hooks';
import { api, settings } from '../api.js';
import { when } from '../format.js';
import { Empty, ErrorBox, Loading, Page, useAction } from '../ui.js';

interface TopupView {
  id: string;
  amount: string;
  status: 'pending' | 'paid' | 'expired';
  paid: string;
  refunded: string;
  disputed: string;
  unpaid: string;
  createdAt: string;
  paidAt: string | null;
}

/** Micro-USD as the amount a payer types: "10", "12.50". */
function dollars(micros: number): string {
  const cents = Math.round(micros / 10_000);
  return cents % 100 === 0 ? String(cents / 100) : `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function TopupList({ items }: { items: TopupView[] }) {
  if (items.length === 0) return <Empty>No card top-ups yet.</Empty>;
  return (
    <table class="tasks" data-testid="topups">
      <caption class="sr-only">The account's card top-ups</caption>
      <thead>
        <tr>
          <th scope="col">Started</th>
          <th scope="col" class="num">
            Amount (USD)
          </th>
          <th scope="col">Status</th>
          <th scope="col" class="num">
            Credited (USD)
          </th>
          <th scope="col">Paid</th>
        </tr>
      </thead>
      <tbody>
        {items.map((t) => (
          <tr key={t.id}>
            <td data-label="Started">{when(Date.parse(t.createdAt))}</td>
            <td data-label="Amount (USD)" class="num">
              {t.amount}
            </td>
            <td data-label="Status">
              <span class={`badge ${t.status === 'paid' ? 'state-success' : t.status === 'expired' ? 'off' : ''}`}>{t.status}</span>
              {t.refunded !== '0.0000' && <span class="badge refunded">refunded {t.refunded}</span>}
            </td>
            <td data-label="Credited (USD)" class="num">
              {t.paid}
            </td>
            <td data-label="Paid">{when(t.paidAt ? Date.parse(t.paidAt) : null)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function TopUp() {
  const { topups } = settings();
  const [balance, setBalance] = useState<string | null>(null);
  const [list, setList] = useState<TopupView[] | null>(null);
  const [amount, setAmount] = useState(topups.presets[0] ? dollars(topups.presets[0]) : '');
  const { busy, error, run } = useAction();
  const [listError, setListError] = useState<unknown>(null);
  useEffect(() => {
    api<{ balance: string }>('GET', '/api/v1/user/balance').then((b) => setBalance(b.balance), setListError);
    api<TopupView[]>('GET', '/api/v1/topups').then(setList, setListError);
  }, []);
  const pay = (e: Event) => {
    e.preventDefault();
    // The button stays busy while the browser leaves for Stripe's page: a second click would start a second checkout.
    void run(
      async () => {
        const started = await api<{ checkoutUrl: string }>('POST', '/api/v1/topups', { amount: amount.trim() });
        location.assign(started.checkoutUrl);
      },
      { stayBusy: true },
    );
  };
  return (
    <Page title="Top up">
      <p>
        Balance:{' '}
        <strong data-testid="topup-balance" aria-live="polite">
          {balance === null ? '…' : `${balance} USD`}
        </strong>
      </p>
      {!topups.enabled ? (
        <div class="card">
          <p>Card payments are not enabled on this GenGate server.</p>
          <p>
            To top up your balance, ask the operator of this server: they add credit to your account with{' '}
            <code>gengate account topup &lt;account id&gt; --amount &lt;USD&gt;</code> or the admin API.
          </p>
        </div>
      ) : (
        <form class="card" onSubmit={pay} aria-labelledby="pay-title">
          <h2 id="pay-title">Pay by card</h2>
          <ErrorBox error={error} title="Not started" />
          <fieldset class="choices">
            <legend>Suggested amounts</legend>
            <div class="row">
              {topups.presets.map((p) => (
                <label key={p} class="choice preset">
                  <input type="radio" name="preset" checked={amount === dollars(p)} onChange={() => setAmount(dollars(p))} /> {dollars(p)} USD
                </label>
              ))}
            </div>
          </fieldset>
          <div class="field">
            <label for="t-amount">Amount in USD</label>
            <input
              id="t-amount"
              inputMode="decimal"
              required
              value={amount}
              aria-describedby="t-amount-hint"
              onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
            />
            <small id="t-amount-hint" class="muted">
              Any amount in whole cents from {dollars(topups.min)} to {dollars(topups.max)} USD.
            </small>
          </div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Going to the payment page…' : `Pay ${amount || '…'} USD with Stripe`}
          </button>
          <p class="muted">The balance is credited once Stripe confirms the payment to this server, usually within seconds.</p>
        </form>
      )}
      <h2>Top-ups</h2>
      <ErrorBox error={listError} title="The top-ups cannot be listed" />
      {!list && !listError && <Loading what="top-ups" />}
      {list && <TopupList items={list} />}
    </Page>
  );
}
