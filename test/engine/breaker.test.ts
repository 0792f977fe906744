import { describe, expect, it } from 'vitest';
import { Breaker } from '../../src/engine/index.js';

/** The per-route circuit breaker on a clock the test moves. */
describe('route circuit breaker', () => {
  const clock = {
    t: 0,
    now() {
      return this.t;
    },
  };
  it('opens after N failures in a row, lets one trial through after the cool-down, closes on success', () => {
    const b = new Breaker({ failures: 3, cooldownMs: 1000 }, clock);
    b.failure();
    b.failure();
    b.success(); // a success in between resets the count
    b.failure();
    b.failure();
    expect(b.state()).toBe('closed');
    expect(b.allow()).toBe(true);
    b.failure();
    expect(b.state()).toBe('open');
    expect(b.allow()).toBe(false);
    clock.t += 999;
    expect(b.allow()).toBe(false);
    clock.t += 1;
    expect(b.state()).toBe('half-open');
    expect(b.allow()).toBe(true); // the trial
    expect(b.allow()).toBe(false); // only one at a time
    b.success();
    expect(b.state()).toBe('closed');
    expect(b.failures).toBe(0);
  });

  it('a failed trial opens it again for a full cool-down; a trial that never reports frees its slot after a cool-down', () => {
    const b = new Breaker({ failures: 1, cooldownMs: 1000 }, clock);
    b.failure();
    clock.t += 1000;
    expect(b.allow()).toBe(true);
    b.failure();
    expect(b.state()).toBe('open');
    clock.t += 1000;
    expect(b.allow()).toBe(true);
    clock.t += 500;
    expect(b.allow()).toBe(false);
    clock.t += 500;
    expect(b.allow()).toBe(true);
  });
});
