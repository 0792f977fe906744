// Operator: the money report (GET /admin/v1/report): every movement of the balances per UTC day or month, and the reconciliation; Stripe's fees
// (not movements) after them; card top-ups below.
import { ErrorBox, Empty, Loading, Page } from '../ui.js';
import { navigate } from '../router.js';
import { AdminNav, useAdmin } from './admin-shared.js';

interface Movements {
  from: string;
  to: string;
  opening: string;
  topups: { operator: string; card: string };
  charges: string;
  refunds: { full: string; partial: string };
  adjustments: { credits: string; debits: string };
  stripe: { refunds: string; disputes: string; disputesWon: string; unpaid: string; fees: string; feesPending: number; net: string };
  net: string;
  closing: string;
}

interface Report {
  from: string;
  to: string;
  by: 'day' | 'month';
  periods: Array<Movements & { period: string }>;
  total: Movements;
  reconciliation: {
    opening: string;
    movements: string;
    closing: string;
    balancesAtEnd: string;
    balancesNow: string;
    movementsAfter: string;
    reconciled: boolean;
  };
}

interface Topups {
  topups: Array<{
    id: string;
    accountId: string;
    amount: string;
    status: string;
    refunded: string;
    disputed: string;
    disputesWon: string;
    unpaid: string;
    fee: string | null;
    feeNote: string | null;
    createdAt: string;
  }>;
  unpaid: string;
}

const COLUMNS: [string, (m: Movements) => string][] = [
  ['Opening', (m) => m.opening],
  ['Top-ups (operator)', (m) => m.topups.operator],
  ['Top-ups (card)', (m) => m.topups.card],
  ['Charges', (m) => m.charges],
  ['Refunds', (m) => m.refunds.full],
  ['Partial refunds', (m) => m.refunds.partial],
  ['Credits', (m) => m.adjustments.credits],
  ['Debits', (m) => m.adjustments.debits],
  ['Stripe refunds', (m) => m.stripe.refunds],
  ['Disputes', (m) => m.stripe.disputes],
  ['Disputes won', (m) => m.stripe.disputesWon],
  ['Net', (m) => m.net],
  ['Closing', (m) => m.closing],
  // Not movements of the balances: what Stripe kept of the card top-ups paid, and what it pays out.
  ['Stripe fees', (m) => (m.stripe.feesPending > 0 ? `${m.stripe.fees} (${m.stripe.feesPending} pending)` : m.stripe.fees)],
  ['Card net of fees', (m) => m.stripe.net],
];

export function AdminReport({ query }: { query: URLSearchParams }) {
  const by = query.get('by') === 'month' ? 'month' : 'day';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const q = new URLSearchParams({ by });
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  const { data: report, error } = useAdmin<Report>(`/admin/v1/report?${q}`);
  const topups = useAdmin<Topups>('/admin/v1/topups');
  const go = (k: string) => (e: Event) => {
    const next = new URLSearchParams(query);
    const v = (e.target as HTMLInputElement).value;
    if (v) next.set(k, v);
    else next.delete(k);
    navigate(`/admin/report${next.toString() ? `?${next}` : ''}`);
  };
  const r = report?.reconciliation;
  const moved = report?.periods.filter((p) => p.net !== '0.000000' || p.charges !== '0.000000' || p.opening !== p.closing) ?? [];

  return (
    <Page title="Money">
      <AdminNav />
      <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Period">
        <div class="field">
          <label for="r-by">Per</label>
          <select id="r-by" value={by} onChange={go('by')}>
            <option value="day">UTC day</option>
            <option value="month">UTC month</option>
          </select>
        </div>
        <div class="field">
          <label for="r-from">From</label>
          <input id="r-from" type="date" value={from} onChange={go('from')} />
        </div>
        <div class="field">
          <label for="r-to">To (included)</label>
          <input id="r-to" type="date" value={to} onChange={go('to')} />
        </div>
        <a href={`/admin/v1/report?${q}&format=csv`} download>
          Download CSV
        </a>
      </form>
      <ErrorBox error={error} title="The report cannot be made" />
      {!report && !error && <Loading what="the report" />}
      {report && r && (
        <>
          <div class={`card ${r.reconciled ? '' : 'alert error'}`} data-testid="reconciliation">
            <h2 class="flush">
              {r.reconciled ? <span class="badge state-success">Reconciled</span> : <span class="badge off">Not reconciled</span>} {report.from.slice(0, 10)} to{' '}
              {report.to.slice(0, 10)} (UTC)
            </h2>
            <dl class="facts">
              <dt>Opening (sum of balances)</dt>
              <dd>{r.opening} USD</dd>
              <dt>Movements</dt>
              <dd>{r.movements} USD</dd>
              <dt>Closing = opening + movements</dt>
              <dd>{r.closing} USD</dd>
              <dt>Balances at the end</dt>
              <dd>{r.balancesAtEnd} USD</dd>
              <dt>Balances now</dt>
              <dd>
                {r.balancesNow} USD ({r.movementsAfter} USD moved since)
              </dd>
            </dl>
          </div>
          <div class="scroll" tabIndex={0} role="region" aria-label="Movements per period">
            <table class="tasks wide">
              <caption class="sr-only">Movements per {by}, USD</caption>
              <thead>
                <tr>
                  <th scope="col">{by === 'day' ? 'Day' : 'Month'}</th>
                  {COLUMNS.map(([h]) => (
                    <th scope="col" class="num" key={h}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {moved.map((p) => (
                  <tr key={p.period}>
                    <th scope="row" data-label={by === 'day' ? 'Day' : 'Month'}>
                      {p.period}
                    </th>
                    {COLUMNS.map(([h, f]) => (
                      <td class="num" data-label={h} key={h}>
                        {f(p)}
                      </td>
                    ))}
                  </tr>
                ))}
                <tr class="total">
                  <th scope="row" data-label="Period">
                    Total
                  </th>
                  {COLUMNS.map(([h, f]) => (
                    <td class="num" data-label={h} key={h}>
                      {f(report.total)}
                    </td>
                  ))}
                </tr>
              </tbody>
            </table>
          </div>
          {moved.length < report.periods.length && <p class="muted">Periods with no movement are left out.</p>}
        </>
      )}
      <h2>Card top-ups</h2>
      {topups.error ? (
        <p class="muted">Card top-ups are not enabled on this server (STRIPE_SECRET_KEY is not set).</p>
      ) : !topups.data ? (
        <Loading what="top-ups" />
      ) : topups.data.topups.length === 0 ? (
        <Empty>No card top-ups.</Empty>
      ) : (
        <>
          <p>Unpaid remainders in total: {topups.data.unpaid} USD.</p>
          <ul class="plain">
            {topups.data.topups.map((t) => (
              <li key={t.id}>
                {t.createdAt.slice(0, 10)} <a href={`/admin/accounts/${encodeURIComponent(t.accountId)}`}>{t.accountId}</a> {t.amount} USD{' '}
                <span class="badge">{t.status}</span>
                {t.refunded !== '0.0000' && ` refunded ${t.refunded}`}
                {t.disputed !== '0.0000' && ` disputed ${t.disputed}`}
                {t.disputesWon !== '0.0000' && ` won back ${t.disputesWon}`}
                {t.unpaid !== '0.0000' && ` unpaid ${t.unpaid}`}
                {t.status === 'paid' && (t.fee !== null ? ` Stripe fee ${t.fee}` : ` Stripe fee pending${t.feeNote ? ` (${t.feeNote})` : ''}`)}
              </li>
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}
