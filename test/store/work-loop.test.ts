import { describe, expect, it } from 'vitest';
import { WorkLoop } from '../../src/store/work-loop.js';

describe('the work loop', () => {
  it('a wake-up that arrives while a claim round runs starts another round at once, not after pollMs', async () => {
    let claims = 0;
    let loop!: WorkLoop<number>;
    const second = new Promise<void>((resolve) => {
      loop = new WorkLoop<number>({
        name: 'test',
        concurrency: 4,
        pollMs: 600_000, // a lost wake-up would leave the loop asleep for 10 minutes: the test would time out
        claim: async () => {
          claims++;
          if (claims === 1) loop.wake(); // a task committed while this claim was looking
          if (claims === 2) resolve();
          return [];
        },
        run: async () => {},
      });
    });
    loop.start();
    await second;
    expect(claims).toBe(2);
    await loop.stop();
  }, 10_000);

  it('sleeps when nothing woke it during the round', async () => {
    let claims = 0;
    const loop = new WorkLoop<number>({ name: 'test', concurrency: 4, pollMs: 600_000, claim: async () => (claims++, []), run: async () => {} });
    loop.start();
    while (loop.rounds < 1) await new Promise((r) => setImmediate(r));
    // Give the loop many turns: without a wake-up it must not claim again.
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(claims).toBe(1);
    await loop.stop();
  });
});
