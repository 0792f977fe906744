import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';

/**
 * The limit groups of DECISIONS §13: per key `write` (createTask + upload) and `read` (recordInfo,
 * list, balance); per address `public`; sign-in attempts per address and per email `signin`
 * (its own, longer window: decision 1903).
 */
export type LimitGroup = 'write' | 'read' | 'public' | 'signin';

/** What a check found, for the RateLimit-* headers and a 429. */
export interface LimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1 when refused). */
  resetSeconds: number;
}

/**
 * Fixed-window counters per (group, subject). In memory by default; with Redis the counters are
 * shared by every process, and an in-memory limiter stands in while Redis is unreachable (limits
 * then hold per process instead of failing open or refusing everyone).
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly windowSeconds: number,
    private readonly redis?: Redis,
  ) {}

  /** Counts one request of `subject` in `group` against `limit` per window (the configured one, or `windowSeconds`). */
  async hit(group: LimitGroup, subject: string, limit: number, windowSeconds?: number): Promise<LimitState> {
    const limiter = this.limiter(group, limit, windowSeconds);
    try {
      const res = await limiter.consume(subject, 1);
      return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: seconds(res.msBeforeNext) };
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, seconds(e.msBeforeNext)) };
    }
  }

  /**
   * Uses `points` more of `subject`'s budget in `group` without answering anything: a cost added
   * after the fact (a request the content check refused), which later requests then feel.
   */
  async take(group: LimitGroup, subject: string, limit: number, points: number): Promise<void> {
    try {
      await this.limiter(group, limit).consume(subject, points);
    } catch (e) {
      // Over the limit already: the window is used up either way.
      if (!(e instanceof RateLimiterRes)) throw e;
    }
  }

  private limiter(group: LimitGroup, limit: number, windowSeconds = this.windowSeconds): RateLimiterAbstract {
    const name = windowSeconds === this.windowSeconds ? `${group}:${limit}` : `${group}:${limit}:${windowSeconds}s`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const opts = { points: limit, duration: windowSeconds, keyPrefix: `gengate:rl:${name}` };
      const memory = new RateLimiterMemory(opts);
      limiter = this.redis ? new RateLimiterRedis({ ...opts, storeClient: this.redis, insuranceLimiter: memory }) : memory;
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
