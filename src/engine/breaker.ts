import type { Clock } from '../clock.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** Breaker settings: consecutive failures that open it, and how long it stays open before one trial. */
export interface BreakerSettings {
  readonly failures: number;
  readonly cooldownMs: number;
}

/**
 * A circuit breaker of one route, in this process's memory (every process learns on its own).
 * Closed: everything passes. After `failures` failures in a row it opens: submits skip the route.
 * After `cooldownMs` it is half-open: one trial submit passes; its success closes the breaker, its
 * failure opens it again. A trial that never reports back frees the slot after another cool-down.
 */
export class Breaker {
  private failuresInRow = 0;
  private openedAt: number | null = null;
  private trialAt: number | null = null;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
  ) {}

  /** The state now (an open breaker whose cool-down has passed reads half-open). */
  state(): BreakerState {
    if (this.openedAt === null) return 'closed';
    return this.clock.now() - this.openedAt >= this.settings.cooldownMs ? 'half-open' : 'open';
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.failuresInRow;
  }

  /** Whether a submit may go to the route now; in half-open state this takes the one trial slot. */
  allow(): boolean {
    const state = this.state();
    if (state === 'closed') return true;
    if (state === 'open') return false;
    const now = this.clock.now();
    if (this.trialAt !== null && now - this.trialAt < Math.max(this.settings.cooldownMs, 1)) return false;
    this.trialAt = now;
    return true;
  }

  /** The route answered well: closes the breaker. */
  success(): void {
    this.failuresInRow = 0;
    this.openedAt = null;
    this.trialAt = null;
  }

  /** The route failed (not accepted, or a transient error): opens after enough in a row, re-opens a half-open one. */
  failure(): void {
    this.failuresInRow++;
    const was = this.state();
    if (was === 'half-open' || (was === 'closed' && this.failuresInRow >= this.settings.failures)) {
      this.openedAt = this.clock.now();
      this.trialAt = null;
    }
  }
}
