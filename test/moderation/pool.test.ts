import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { ClassifierPool, ModerationBusy, modelPixels } from '../../src/moderation/index.js';

/** A real photo as the model reads it. */
async function pixels(): Promise<Uint8Array> {
  return modelPixels(
    await sharp({ create: { width: 80, height: 60, channels: 3, background: { r: 30, g: 140, b: 60 } } })
      .png()
      .toBuffer(),
  );
}

describe('the image classifier pool', () => {
  let pool: ClassifierPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it("lets the waiting accounts take turns: a second account does not wait behind the first one's queue", async () => {
    pool = new ClassifierPool({ workers: 1, checksPerAccount: 10, queueMax: 10 });
    const px = await pixels();
    const order: string[] = [];
    const run = (account: string, name: string) =>
      pool!.score(px, account).then((score) => {
        order.push(name);
        return score;
      });
    // a1 goes to the worker at once; a2, a3 wait; b1 arrives last but gets the turn after a2.
    const all = [run('a', 'a1'), run('a', 'a2'), run('a', 'a3'), run('b', 'b1')];
    const scores = await Promise.all(all);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
    for (const s of scores) expect(s).toBeLessThan(0.7);
    expect(pool.stats()).toMatchObject({ classified: 4, queued: 0, running: 0 });
  }, 60_000);

  it('refuses a photo past the queue bound with a Retry-After, and serves the queue it holds', async () => {
    pool = new ClassifierPool({ workers: 1, checksPerAccount: 10, queueMax: 2 });
    const px = await pixels();
    const held = [pool.score(px, 'a'), pool.score(px, 'a'), pool.score(px, 'b')];
    const refused = pool.score(px, 'c');
    await expect(refused).rejects.toBeInstanceOf(ModerationBusy);
    await expect(refused).rejects.toMatchObject({ message: 'the content check has 2 photos waiting (at most 2)', retryAfterSeconds: expect.any(Number) });
    const busy = await refused.then(
      () => null,
      (e: ModerationBusy) => e,
    );
    expect(busy?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    await Promise.all(held);
    expect(pool.stats()).toMatchObject({ classified: 3, busyRefusals: 1 });
  }, 60_000);

  it('gives one account at most its share of checks at once; a release frees it, other accounts are not affected', () => {
    pool = new ClassifierPool({ workers: 1, checksPerAccount: 2, queueMax: 10 });
    const r1 = pool.admit('a');
    const r2 = pool.admit('a');
    expect(() => pool!.admit('a')).toThrow(/this account already has 2 content checks with photos running \(at most 2 at once\)/);
    const other = pool.admit('b');
    r1();
    r1(); // a second release of the same slot frees nothing more
    const r3 = pool.admit('a');
    expect(() => pool!.admit('a')).toThrow(ModerationBusy);
    for (const release of [r2, r3, other]) release();
    expect(pool.stats().busyRefusals).toBe(2);
  });

  it('fails a photo closed when the model cannot run in the worker, without a server path in the message', async () => {
    // A backend name TensorFlow.js does not know: the worker's model load fails.
    pool = new ClassifierPool({ workers: 1, checksPerAccount: 10, queueMax: 10, backend: 'nonexistent' as 'cpu' });
    const px = await pixels();
    for (let i = 0; i < 2; i++) {
      const e = await pool.score(px, 'a').then(
        () => null,
        (err: Error) => err,
      );
      expect(e).toMatchObject({ name: 'ModerationUnavailable', clientFault: false, message: 'the image classifier could not run' });
      expect(String((e as Error & { cause: unknown }).cause)).toMatch(/nonexistent/);
    }
    expect(pool.stats()).toMatchObject({ classified: 0, queued: 0, running: 0 });
  }, 60_000);
});
