// Operator: the metrics that matter, per minute, as charts (GET /admin/v1/dashboard, read from the database; decision 2002), refreshed every 30 s.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { usd } from '../format.js';
import { navigate } from '../router.js';
import { ErrorBox, Loading, Page } from '../ui.js';
import { Chart, type Series } from './admin-chart.js';
import { AdminNav, adminProblem } from './admin-shared.js';

export interface Dashboard {
  minutes: number[];
  tasks: { created: number[]; succeeded: number[]; failed: number[] };
  failuresByCode: Record<string, number[]>;
  inFlight: number[];
  now: { waiting: number; queuing: number; generating: number };
  active: Array<{ model: string; routeIndex: number; state: 'waiting' | 'queuing' | 'generating'; count: number }>;
  callbacks: { delivered: number[]; failed: number[] };
  money: { chargedMicros: number[]; refundedMicros: number[] };
}

const COLORS = ['#1e6fd9', '#12803a', '#c2261b', '#b35c00', '#7b3fb8', '#0f7c8a', '#8a6d00'];
const RANGES: [string, string][] = [
  ['60', 'Last hour'],
  ['360', 'Last 6 hours'],
  ['1440', 'Last 24 hours'],
];
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export function AdminDashboard({ query }: { query: URLSearchParams }) {
  const range = RANGES.some(([v]) => v === query.get('minutes')) ? query.get('minutes')! : '60';
  const [data, setData] = useState<Dashboard | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setData(null);
    const read = () =>
      api<Dashboard>('GET', `/admin/v1/dashboard?minutes=${range}`).then(
        (d) => live && (setData(d), setError(null)),
        (e) => live && setError(adminProblem(e)),
      );
    void read();
    const timer = setInterval(read, 30_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [range]);

  const charts = useMemo(() => {
    if (!data) return null;
    const codes = Object.entries(data.failuresByCode);
    return {
      tasks: [
        { label: 'created', values: data.tasks.created, color: COLORS[0]! },
        { label: 'succeeded', values: data.tasks.succeeded, color: COLORS[1]! },
        { label: 'failed', values: data.tasks.failed, color: COLORS[2]! },
      ] as Series[],
      failures: codes.map(([code, values], i) => ({ label: `code ${code}`, values, color: COLORS[(i + 2) % COLORS.length]! })),
      inFlight: [{ label: 'not final', values: data.inFlight, color: COLORS[3]! }],
      callbacks: [
        { label: 'delivered', values: data.callbacks.delivered, color: COLORS[1]! },
        { label: 'failed', values: data.callbacks.failed, color: COLORS[2]! },
      ],
      money: [
        { label: 'charged', values: data.money.chargedMicros, color: COLORS[0]! },
        { label: 'refunded', values: data.money.refundedMicros, color: COLORS[4]! },
      ],
      codes,
    };
  }, [data]);

  return (
    <Page title="Operator dashboard">
      <AdminNav />
      <div class="filters card">
        <div class="field">
          <label for="d-range">Period</label>
          <select id="d-range" value={range} onChange={(e) => navigate(`/admin?minutes=${(e.target as HTMLSelectElement).value}`)}>
            {RANGES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <p class="muted">Per minute, from the database; refreshed every 30 seconds.</p>
      </div>
      <ErrorBox error={error} title="The figures cannot be read" />
      {!data && !error && <Loading what="the figures" />}
      {data && charts && (
        <>
          <div class="stats">
            {(['waiting', 'queuing', 'generating'] as const).map((s) => (
              <div class="card stat" key={s}>
                <h2>{s === 'waiting' ? 'Waiting (queue depth)' : s === 'queuing' ? 'Queuing upstream' : 'Generating'}</h2>
                <p class="figure" data-testid={`now-${s}`}>
                  {data.now[s]}
                </p>
              </div>
            ))}
          </div>
          <div class="charts">
            <Chart
              title="Tasks per minute"
              minutes={data.minutes}
              series={charts.tasks}
              summary={`In the period: ${sum(data.tasks.created)} created, ${sum(data.tasks.succeeded)} succeeded, ${sum(data.tasks.failed)} failed.`}
            />
            <Chart
              title="Failures by code"
              minutes={data.minutes}
              series={charts.failures.length ? charts.failures : [{ label: 'failures', values: data.tasks.failed, color: COLORS[2]! }]}
              summary={
                charts.codes.length ? `In the period: ${charts.codes.map(([c, v]) => `${sum(v)} with code ${c}`).join(', ')}.` : 'No failures in the period.'
              }
            />
            <Chart
              title="Tasks in flight (queue)"
              minutes={data.minutes}
              series={charts.inFlight}
              summary={`Not final now: ${data.inFlight[data.inFlight.length - 1] ?? 0}; at most ${Math.max(0, ...data.inFlight)} in the period.`}
            />
            <Chart
              title="Callback deliveries"
              minutes={data.minutes}
              series={charts.callbacks}
              summary={`In the period: ${sum(data.callbacks.delivered)} delivered, ${sum(data.callbacks.failed)} failed attempts.`}
            />
            <Chart
              title="Revenue and refunds (USD)"
              minutes={data.minutes}
              series={charts.money}
              format={(v) => usd(v)}
              summary={`In the period: ${usd(sum(data.money.chargedMicros))} USD charged, ${usd(sum(data.money.refundedMicros))} USD refunded (the ledger's entries).`}
            />
          </div>
        </>
      )}
    </Page>
  );
}
