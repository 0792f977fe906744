/**
 * The request-latency histogram, kept by hand: prom-client's labelled `observe` validates and
 * hashes the labels on every call (about a microsecond); here a request costs one Map lookup, a
 * short loop over the buckets and two additions. It exposes prom-client's metric interface
 * (`get()`), so the registry renders it like any histogram.
 */

interface Series {
  labels: { method: string; route: string; status: string };
  counts: Float64Array;
  sum: number;
  count: number;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class RequestHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** Counts one request of `seconds` under (method, route, status). */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${status}${method}${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { method, route, status: String(status) }, counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const { bounds } = this;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        s.counts[i]!++;
        break;
      }
    }
    s.sum += seconds;
    s.count++;
  }

  /** prom-client's metric interface: cumulative buckets, +Inf, sum and count per series. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
