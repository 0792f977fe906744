import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FAST, create, expectLedgerInvariant, settle } from '../tasks/support.js';
import { cardFee, cardTopUp, completed, deliver, disputeWon, disputed, refunded, startFakeStripe, stripeSettings } from '../fakes/stripe.js';

const ADMIN = 'admin-token-for-report-tests-012';
const USD = 1_000_000;
const micros = (usd: string) => Math.round(Number(usd) * USD);
const pause = () => new Promise((r) => setTimeout(r, 5));

describe.each(dialects())('the money report on %s', (dialect) => {
  let s: TestServer;
  let stripe: Awaited<ReturnType<typeof startFakeStripe>>;
  const admin = (method: string, path: string, body?: unknown) => s.call(method, `/admin/v1${path}`, { body, headers: { authorization: `Bearer ${ADMIN}` } });

  beforeAll(async () => {
    stripe = await startFakeStripe();
    s = await startServer(dialect, {
      ...FAST,
      ...stripeSettings(stripe),
      TOPUP_MIN: '5',
      TOPUP_MAX: '500',
      ADMIN_TOKEN: ADMIN,
    });
    s.services.engine.start();
  });
  afterAll(async () => {
    await s?.close();
    await stripe?.close();
  });

  /** A card top-up, its fee fetched (the try right after the credit runs in the background). */
  const card = async (usd: string) => {
    const c = await cardTopUp(s, stripe, usd);
    await s.services.payments.fees!.idle();
    return c;
  };
  const taskCharge = async (taskId: string) => {
    const row = await s.services.database.db
      .selectFrom('ledger_entries')
      .select('amount_micros')
      .where('task_id', '=', taskId)
      .where('kind', '=', 'charge')
      .executeTakeFirstOrThrow();
    return -Number(row.amount_micros);
  };
  const balances = async () =>
    (await s.services.database.db.selectFrom('accounts').select('balance_micros').execute()).reduce((sum, r) => sum + Number(r.balance_micros), 0);

  it('reconciles a mixed workload: opening + movements = closing = the sum of the balances, each kind in its column', async () => {
    const from = new Date(Date.now() - 60_000).toISOString();
    await pause();
    // Operator money: an opening balance, a top-up, a credit and a debit.
    const a = await s.account(10);
    expect((await admin('POST', `/accounts/${a.id}/topup`, { amount: '5' })).status).toBe(200);
    // Tasks: two succeed, one fails (refunded in full), one success partly refunded.
    const ok1 = await create(s, a.key, 'google/nano-banana', { prompt: 'report: a kite', aspect_ratio: '1:1' });
    const ok2 = await create(s, a.key, 'google/nano-banana', { prompt: 'report: a boat', aspect_ratio: '1:1' });
    const bad = await create(s, a.key, 'google/nano-banana', { prompt: 'report: doomed gengate:fail=501', aspect_ratio: '1:1' });
    for (const id of [ok1, ok2, bad]) await settle(s, a.key, id);
    await s.services.database.tx((t) => s.services.ledger.refund(t, ok2, 'partial_refund', 'test: shorter', 1_000));
    await pause();
    const mid = new Date().toISOString();
    await pause();
    expect((await admin('POST', `/accounts/${a.id}/adjustments`, { amount: '+1.5', reason: 'goodwill' })).status).toBe(200);
    expect((await admin('POST', `/accounts/${a.id}/adjustments`, { amount: '-0.5', reason: 'correction' })).status).toBe(200);
    // Card money: 25 paid then 5 refunded; 10 paid, 8 spent, then disputed in full (2 debited, 8 unpaid).
    const b = await card('25');
    expect((await deliver(s.url, refunded(b.session, 500))).body.outcome).toBe('reversal_applied');
    const c = await card('10');
    await s.services.database.tx((t) => s.services.ledger.charge(t, c.id, 8 * USD, null, 'spent'));
    expect((await deliver(s.url, disputed(c.session, 1000))).body.outcome).toBe('reversal_applied');
    await pause();
    const to = new Date(Date.now() + 60_000).toISOString();

    const r = await admin('GET', `/report?from=${from}&to=${to}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const t = r.body.data.total;
    const charged = (await taskCharge(ok1)) + (await taskCharge(ok2)) + (await taskCharge(bad)) + 8 * USD;
    expect(micros(t.opening)).toBe(0);
    expect(micros(t.topups.operator)).toBe(15 * USD);
    expect(micros(t.topups.card)).toBe(35 * USD);
    expect(micros(t.charges)).toBe(-charged);
    expect(micros(t.refunds.full)).toBe(await taskCharge(bad));
    expect(micros(t.refunds.partial)).toBe(1_000);
    expect(t.adjustments).toEqual({ credits: '1.500000', debits: '-0.500000' });
    // Stripe's fees of the two payments (2.9% + 30 cents: 1.03 and 0.59): shown, not movements of the balances.
    expect(cardFee(2500) + cardFee(1000)).toBe(162);
    expect(t.stripe).toEqual({
      refunds: '-5.000000',
      disputes: '-2.000000',
      disputesWon: '0.000000',
      unpaid: '8.000000',
      fees: '1.620000',
      feesPending: 0,
      net: '33.380000',
    });
    const sum = Object.values({ ...t.topups, ...t.refunds, ...t.adjustments, c: t.charges, r: t.stripe.refunds, d: t.stripe.disputes }).reduce(
      (acc: number, v) => acc + micros(v as string),
      0,
    );
    expect(micros(t.net)).toBe(sum);
    expect(micros(t.closing)).toBe(micros(t.opening) + sum);
    expect(micros(t.closing)).toBe(await balances());
    expect(r.body.data.reconciliation).toMatchObject({ closing: t.closing, balancesAtEnd: t.closing, movementsAfter: '0.000000', reconciled: true });
    // Each period opens with the closing of the one before.
    const periods = r.body.data.periods as Array<{ opening: string; net: string; closing: string }>;
    for (let i = 1; i < periods.length; i++) expect(periods[i]!.opening).toBe(periods[i - 1]!.closing);
    expect(periods.at(-1)!.closing).toBe(t.closing);

    // A period that ends in the middle: its closing is the balances then (now less what moved since).
    const early = (await admin('GET', `/report?from=${from}&to=${mid}`)).body.data;
    const late = (await admin('GET', `/report?from=${mid}&to=${to}`)).body.data;
    expect(early.reconciliation.reconciled).toBe(true);
    expect(micros(early.reconciliation.movementsAfter)).toBe(micros(late.total.net));
    expect(late.total.opening).toBe(early.total.closing);
    expect(micros(early.total.closing)).toBe(micros(t.closing) - micros(late.total.net));
    expect(late.total.topups.card).toBe('35.000000');
    expect(early.total.topups.card).toBe('0.000000');
    await expectLedgerInvariant(s.services.database);

    // CSV: one line per period and a total line; the CLI prints the same text.
    const csvRes = await fetch(`${s.url}/admin/v1/report?from=${from}&to=${to}&by=month&format=csv`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(csvRes.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const csv = await csvRes.text();
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'period,from,to,opening_usd,operator_topups_usd,card_topups_usd,charges_usd,refunds_usd,partial_refunds_usd,credits_usd,debits_usd,stripe_refunds_usd,stripe_disputes_usd,stripe_disputes_won_usd,unpaid_usd,stripe_fees_usd,stripe_fees_pending,card_net_usd,net_usd,closing_usd,balances_at_end_usd,reconciled',
    );
    for (const line of lines) expect(line.split(',')).toHaveLength(22);
    expect(lines[1]).toMatch(/^\d{4}-\d{2},/);
    expect(lines.at(-1)).toBe(
      `total,${from},${to},0.000000,15.000000,35.000000,${t.charges},${t.refunds.full},0.001000,1.500000,-0.500000,-5.000000,-2.000000,0.000000,8.000000,1.620000,0,33.380000,${t.net},${t.closing},${t.closing},true`,
    );
    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const cli = await gengate(['report', '--from', from, '--to', to, '--by', 'month', '--csv'], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(csv);
    const text = await gengate(['report', '--from', from, '--to', to], env);
    expect(text.stdout).toMatch(/^card top-ups\s+35\.000000$/m);
    expect(text.stdout).toMatch(/^balances at end\s+\S+ {2}reconciled$/m);
    expect(text.stdout).toMatch(/^Stripe fees\s+1\.620000 {2}\(all known;/m);
    expect(text.stdout).toMatch(/^card net of fees\s+33\.380000 /m);
    const json = await gengate(['report', '--from', from, '--to', to, '--json'], env);
    expect(JSON.parse(json.stdout).reconciliation).toEqual(r.body.data.reconciliation);
  }, 240_000);

  it('a won dispute gives back what the dispute took in its own column and clears the unpaid remainder; the report reconciles', async () => {
    await pause();
    const from = new Date().toISOString();
    await pause();
    // 10 paid, 8 spent, disputed in full: 2 debited, 8 unpaid.
    const c = await card('10');
    await s.services.database.tx((t) => s.services.ledger.charge(t, c.id, 8 * USD, null, 'spent'));
    expect((await deliver(s.url, disputed(c.session, 1000, 'dp_report_won'))).body.outcome).toBe('reversal_applied');
    await pause();
    const mid = new Date().toISOString();
    await pause();
    // Won: the 2 come back, the 8 are no longer owed.
    expect((await deliver(s.url, disputeWon(c.session, 1000, 'dp_report_won'))).body.outcome).toBe('dispute_won');
    expect((await deliver(s.url, disputeWon(c.session, 1000, 'dp_report_won'))).body.outcome).toBe('duplicate');
    await pause();
    const to = new Date(Date.now() + 60_000).toISOString();

    const whole = (await admin('GET', `/report?from=${from}&to=${to}`)).body.data;
    expect(whole.total.stripe).toEqual({
      refunds: '0.000000',
      disputes: '-2.000000',
      disputesWon: '2.000000',
      unpaid: '0.000000',
      fees: '0.590000',
      feesPending: 0,
      net: '9.410000',
    });
    expect(whole.total).toMatchObject({ opening: whole.reconciliation.opening, charges: '-8.000000', topups: { operator: '0.000000', card: '10.000000' } });
    expect(micros(whole.total.net)).toBe(2 * USD);
    expect(whole.reconciliation).toMatchObject({ closing: whole.total.closing, balancesAtEnd: whole.total.closing, reconciled: true });
    expect(micros(whole.total.closing)).toBe(await balances());
    const before = (await admin('GET', `/report?from=${from}&to=${mid}`)).body.data.total;
    const after = (await admin('GET', `/report?from=${mid}&to=${to}`)).body.data;
    expect(before.stripe).toMatchObject({ disputes: '-2.000000', disputesWon: '0.000000', unpaid: '8.000000' });
    expect(after.total.stripe).toMatchObject({ disputes: '0.000000', disputesWon: '2.000000', unpaid: '-8.000000' });
    expect(after.total.net).toBe('2.000000');
    expect(after.reconciliation.reconciled).toBe(true);

    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const csv = await gengate(['report', '--from', from, '--to', to, '--csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.trimEnd().split('\n').at(-1)).toBe(
      `total,${from},${to},${whole.total.opening},0.000000,10.000000,-8.000000,0.000000,0.000000,0.000000,0.000000,0.000000,-2.000000,2.000000,0.000000,0.590000,0,9.410000,2.000000,${whole.total.closing},${whole.total.closing},true`,
    );
    const text = await gengate(['report', '--from', mid, '--to', to], env);
    expect(text.stdout).toMatch(/^disputes won\s+2\.000000$/m);
    expect(text.stdout).toMatch(/^unpaid remainders\s+-8\.000000 /m);
    expect(text.stdout).toMatch(/reconciled$/m);
    await expectLedgerInvariant(s.services.database);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it("shows Stripe's fees of the period, known and pending, without moving the balances; the report reconciles before and after the retry", async () => {
    await pause();
    const from = new Date().toISOString();
    await pause();
    // Three card payments: 20 with its fee known at once, 30 whose balance transaction is not
    // available yet, 50 credited while Stripe is down. Every one is credited in full.
    const known = await card('20');
    const a = await s.account(0);
    const late = await s.call('POST', '/api/v1/topups', { key: a.key, body: { amount: '30' } });
    const lateSession = stripe.session(late.body.data.sessionId);
    stripe.balance(lateSession, null);
    expect((await deliver(s.url, completed(lateSession))).body.outcome).toBe('credited');
    const b = await s.account(0);
    const down = await s.call('POST', '/api/v1/topups', { key: b.key, body: { amount: '50' } });
    stripe.failReads(1);
    expect((await deliver(s.url, completed(stripe.session(down.body.data.sessionId)))).body.outcome).toBe('credited');
    await s.services.payments.fees!.idle();
    for (const [id, usd] of [
      [known.id, 20],
      [a.id, 30],
      [b.id, 50],
    ] as const)
      expect(await s.services.accounts.balanceMicros(id)).toBe(usd * USD);
    await pause();
    const to = new Date(Date.now() + 60_000).toISOString();

    const first = (await admin('GET', `/report?from=${from}&to=${to}`)).body.data;
    expect(first.total.topups.card).toBe('100.000000');
    // Only the 20's fee is known (0.88); the other two are counted as not known yet.
    expect(first.total.stripe).toMatchObject({ fees: '0.880000', feesPending: 2, net: '99.120000' });
    expect(first.total.net).toBe('100.000000');
    expect(first.reconciliation).toMatchObject({ closing: first.total.closing, balancesAtEnd: first.total.closing, reconciled: true });
    expect(first.periods.reduce((n: number, p: { stripe: { feesPending: number } }) => n + p.stripe.feesPending, 0)).toBe(2);

    // Stripe has them later: the retry fills both; the balances and the movements do not change.
    stripe.balance(lateSession, { fee: cardFee(3000), net: 3000 - cardFee(3000), currency: 'usd' });
    await s.services.payments.fees!.retry(Date.now() + 10 * 60_000);
    const second = (await admin('GET', `/report?from=${from}&to=${to}`)).body.data;
    expect(cardFee(2000) + cardFee(3000) + cardFee(5000)).toBe(88 + 117 + 175);
    expect(second.total.stripe).toMatchObject({ fees: '3.800000', feesPending: 0, net: '96.200000' });
    expect({ ...second.total, stripe: null }).toEqual({ ...first.total, stripe: null });
    expect({ ...second.total.stripe, fees: null, feesPending: null, net: null }).toEqual({ ...first.total.stripe, fees: null, feesPending: null, net: null });
    expect(second.reconciliation).toEqual(first.reconciliation);
    expect(second.reconciliation.reconciled).toBe(true);
    expect(micros(second.total.closing)).toBe(await balances());

    const env = { DATABASE_URL: s.db.url, DATA_DIR: s.db.dir };
    const csv = await gengate(['report', '--from', from, '--to', to, '--csv'], env);
    expect(csv.code, csv.stderr).toBe(0);
    const total = csv.stdout.trimEnd().split('\n').at(-1)!.split(',');
    expect(total.slice(15, 18)).toEqual(['3.800000', '0', '96.200000']);
    expect(total.at(-1)).toBe('true');
    const text = await gengate(['report', '--from', from, '--to', to], env);
    expect(text.stdout).toMatch(/^Stripe fees\s+3\.800000 {2}\(all known;/m);
    await expectLedgerInvariant(s.services.database);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('lists every UTC day or month of the period and refuses bad parameters', async () => {
    const days = (await admin('GET', '/report?from=2026-01-30&to=2026-03-02')).body.data;
    expect(days.periods.map((p: { period: string }) => p.period)).toHaveLength(32);
    expect(days.periods[0]).toMatchObject({ period: '2026-01-30', from: '2026-01-30T00:00:00.000Z', to: '2026-01-31T00:00:00.000Z' });
    const months = (await admin('GET', '/report?from=2026-01-30&to=2026-03-02&by=month')).body.data;
    expect(months.periods.map((p: { period: string; from: string; to: string }) => [p.period, p.from, p.to])).toEqual([
      ['2026-01', '2026-01-30T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
      ['2026-02', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
      ['2026-03', '2026-03-01T00:00:00.000Z', '2026-03-03T00:00:00.000Z'],
    ]);
    expect(months.reconciliation.reconciled).toBe(true);
    for (const [query, msg] of [
      ['by=week', /by: must be one of "day", "month"/],
      ['from=2024-01-01&to=2026-01-01', /at most 366 days/],
      ['from=x', /from must be a date/],
      ['account=1', /unknown query parameter "account"/],
    ] as const) {
      const r = await admin('GET', `/report?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.msg, query).toMatch(msg);
    }
    expect((await s.call('GET', '/admin/v1/report')).status).toBe(401);
    const { key } = await s.account(1);
    expect((await s.call('GET', '/admin/v1/report', { key })).status).toBe(401);
  });
});
