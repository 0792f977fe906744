// The spend-per-day chart: uPlot (decision 2001), loaded only by the usage page (a separate chunk, so the
// first page stays small). The figures drawn are the API's micro-USD; the exact text is in the table beside it.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#0b57d0';

/** Draws bars of spend per UTC day (`days` as "2026-11-01") into `el`; returns a function that removes the chart. */
export function drawDays(el: HTMLElement, days: string[], micros: number[]): () => void {
  const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const ys = micros.map((m) => m / 1_000_000);
  const fg = cssVar('--fg');
  const line = cssVar('--line');
  const accent = cssVar('--accent');
  const axis = { stroke: fg, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
  const width = Math.max(280, el.clientWidth);
  const bars = uPlot.paths.bars!({ size: [0.7, 40] });
  const plot = new uPlot(
    {
      width,
      height: 240,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { ...axis, values: (_u, splits) => splits.map((s) => new Date(s * 1000).toISOString().slice(5, 10)) },
        { ...axis, size: 70, values: (_u, splits) => splits.map((s) => `$${s.toFixed(s < 1 ? 4 : 2)}`) },
      ],
      series: [{}, { label: 'Spent (USD)', stroke: accent, fill: accent, paths: bars, points: { show: false } }],
    },
    [xs, ys],
    el,
  );
  const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 });
  addEventListener('resize', resize);
  return () => {
    removeEventListener('resize', resize);
    plot.destroy();
  };
}
