import type { CreditReading, UpstreamAccount } from '../types.js';
import type { UpstreamHttp } from '../upstream/index.js';

/** How often the credit of one kie.ai account is read again (at most; only when something asks). */
export const CREDIT_EVERY_MS = 60_000;
/** Deadline of one credit reading: a slow answer must not hold a submit long. */
const CREDIT_TIMEOUT_MS = 5_000;

/** The credit of one kie.ai account (address + key), read from `GET /api/v1/chat/credit`; shared by every route on that account. */
class CreditMeter {
  credit: number | null = null;
  readAt: number | null = null;
  private triedAt = 0;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly http: UpstreamHttp,
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly now: () => number,
  ) {}

  stale(): boolean {
    return this.now() - this.triedAt >= CREDIT_EVERY_MS;
  }

  /** Reads the credit once (callers at the same time share the reading); a failed reading keeps the last good one. */
  refresh(): Promise<void> {
    this.inflight ??= (async () => {
      this.triedAt = this.now();
      try {
        const res = await this.http.json('GET', this.url, { headers: this.headers, timeoutMs: CREDIT_TIMEOUT_MS });
        const env = res.data as { code?: unknown; data?: unknown } | undefined;
        if (res.status === 200 && (env?.code === undefined || Number(env.code) === 200) && typeof env?.data === 'number' && Number.isFinite(env.data)) {
          this.credit = env.data;
          this.readAt = this.now();
        }
      } catch {
        // Unreadable for now: the last reading stands, the next one comes after CREDIT_EVERY_MS.
      } finally {
        this.inflight = null;
      }
    })();
    return this.inflight;
  }
}

const meters = new Map<string, CreditMeter>();

/**
 * The account of a kie route (DECISIONS §19): its credit, read at most every CREDIT_EVERY_MS, and
 * the route's `min_credit`. Below it, `check` names the reason and the engine skips the route like
 * an open breaker. An unknown credit (never read, or kie.ai not answering) does not stop the route:
 * kie.ai itself refuses a create without credit (402), which fails the task over.
 */
export function kieAccount(http: UpstreamHttp, baseUrl: string, apiKey: string, minCredit: number | undefined, now: () => number = Date.now): UpstreamAccount {
  const key = `${baseUrl}\n${apiKey}`;
  let meter = meters.get(key);
  if (!meter) {
    meter = new CreditMeter(http, `${baseUrl}/api/v1/chat/credit`, { authorization: `Bearer ${apiKey}` }, now);
    meters.set(key, meter);
  }
  const m = meter;
  const reading = (): CreditReading => ({
    credit: m.credit,
    minCredit: minCredit ?? null,
    low: minCredit !== undefined && m.credit !== null && m.credit < minCredit,
    readAt: m.readAt,
  });
  return {
    async check() {
      // Without a minimum nothing waits for the reading: it is only shown.
      if (m.stale()) await (minCredit === undefined ? (void m.refresh(), undefined) : m.refresh());
      const r = reading();
      return r.low ? `kie.ai credit ${r.credit} is below the route's min_credit ${r.minCredit}` : null;
    },
    reading() {
      if (m.stale()) void m.refresh();
      return reading();
    },
  };
}
