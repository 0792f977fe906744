// A time-series chart: uPlot (a small maintained canvas library), loaded only when the first chart is drawn.
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

let library: Promise<typeof uPlot> | null = null;
function loadUplot(): Promise<typeof uPlot> {
  library ??= import('uplot').then((m) => m.default);
  return library;
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';

/** Draws `series` over `minutes` (Unix ms); the figure's caption and the summary text say the same in words for screen readers. */
export function Chart({
  title,
  minutes,
  series,
  format = String,
  summary,
}: {
  title: string;
  minutes: number[];
  series: Series[];
  format?: (v: number) => string;
  summary: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let plot: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    let gone = false;
    loadUplot().then(
      (UPlot) => {
        if (gone || !box.current) return;
        const fg = cssVar('--fg');
        const grid = cssVar('--line');
        const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
        const width = () => Math.max(240, box.current?.clientWidth ?? 480);
        plot = new UPlot(
          {
            width: width(),
            height: 200,
            legend: { show: true },
            cursor: { drag: { x: false, y: false } },
            scales: { x: { time: true } },
            axes: [axis, { ...axis, values: (_u, vals) => vals.map((v) => format(v)), size: 70 }],
            series: [
              {},
              ...series.map((s) => ({
                label: s.label,
                stroke: s.color,
                width: 2,
                fill: `${s.color}22`,
                value: (_u: uPlot, v: number | null) => (v == null ? '—' : format(v)),
              })),
            ],
          },
          [minutes.map((m) => m / 1000), ...series.map((s) => s.values)],
          box.current,
        );
        observer = new ResizeObserver(() => plot?.setSize({ width: width(), height: 200 }));
        observer.observe(box.current);
      },
      () => setError('the chart library could not be loaded; reload the page'),
    );
    return () => {
      gone = true;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [minutes, series]);
  return (
    <figure class="card chart" data-testid="chart">
      <figcaption>
        <h2 class="flush">{title}</h2>
      </figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${summary}`} />
      {error && (
        <p class="alert error" role="alert">
          {error}
        </p>
      )}
      <p class="muted small">{summary}</p>
    </figure>
  );
}
