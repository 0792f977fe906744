import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashPool, dummyHash, hashPassword, hashPool, useHashPool, verifyPassword } from '../../src/members/index.js';
import { AppError } from '../../src/errors.js';
import { dialects } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { within } from '../helpers/sockets.js';

/**
 * A hashing thread the test can hold: it hashes for real, but once told 'hold' it keeps every
 * hash until told 'go' (then answers them all and hashes straight on). So "the pool is busy" is a
 * state the test makes, not a moment it hopes to catch.
 */
const HOLDING_WORKER = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
let holding = false;
const held = [];
const run = (job) => parentPort.postMessage({ id: job.id, key: scryptSync(job.password, job.salt, job.keyBytes, { N: job.N, r: job.r, p: job.p, maxmem: job.maxmem }) });
parentPort.on('message', (m) => {
  if (m === 'hold') return void (holding = true);
  if (m === 'go') { holding = false; held.splice(0).forEach(run); return; }
  if (holding) held.push(m); else run(m);
});
`;

/** A pool of `size` holdable threads; `hold()` and `go()` act on every thread it has started. */
function holdablePool(size: number, queue: number) {
  const workers: Worker[] = [];
  const pool = new HashPool({ size, queue, spawn: () => workers[workers.push(new Worker(HOLDING_WORKER, { eval: true })) - 1]! });
  return { pool, hold: () => workers.forEach((w) => w.postMessage('hold')), go: () => workers.forEach((w) => w.postMessage('go')), workers };
}

/** Waits (on the event loop, not a clock) until `ok()` holds. */
async function until(ok: () => boolean, what: string): Promise<void> {
  await within(
    (async () => {
      while (!ok()) await new Promise((r) => setImmediate(r));
    })(),
    30_000,
    what,
  );
}

describe('the password hashing pool', () => {
  const previous = hashPool();
  afterAll(() => useHashPool(previous));

  it('hashes on its own threads: at most size run, at most queue wait, one more is refused with 429 at once', async () => {
    const { pool, hold, go } = holdablePool(2, 3);
    useHashPool(pool);
    const first = await hashPassword('correct horse battery'); // starts one thread, for real
    expect(await verifyPassword('correct horse battery', first)).toBe(true);
    hold();
    // All asked for in one turn of the event loop: no thread can answer in between.
    const asked = Array.from({ length: 6 }, () =>
      hashPassword('correct horse battery').then(
        (h) => h,
        (e: unknown) => e,
      ),
    );
    const refused = await asked[5];
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ kind: 'rate_limited', headers: { 'retry-after': '1' } });
    expect((refused as Error).message).toMatch(/too many sign-ins and password changes at once/);
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(3);
    hold(); // the second thread started after the first hold
    go();
    const hashes = await Promise.all(asked.slice(0, 5));
    for (const h of hashes) expect(await verifyPassword('correct horse battery', h as string)).toBe(true);
    expect(pool.running + pool.queued).toBe(0);
    await pool.close();
  });

  it('a thread that stops fails its hash, and the next hash starts a new one', async () => {
    const { pool, workers } = holdablePool(1, 0);
    useHashPool(pool);
    await hashPassword('correct horse battery');
    workers[0]!.postMessage('hold');
    const lost = hashPassword('correct horse battery').catch((e: Error) => e.message);
    await until(() => pool.running === 1, 'the hash starting');
    await workers[0]!.terminate();
    expect(await lost).toMatch(/stopped/);
    expect(await verifyPassword('correct horse battery', await hashPassword('correct horse battery'))).toBe(true);
    await pool.close();
  });

  it('a stop that closes the pool while the start-up dummy hash runs fails it quietly; the next sign-in makes it again', async () => {
    const { pool, hold } = holdablePool(1, 0);
    useHashPool(pool);
    await hashPassword('correct horse battery');
    hold();
    const first = dummyHash().catch((e: Error) => e.message);
    await until(() => pool.running === 1, 'the dummy hash starting');
    await pool.close();
    expect(await first).toMatch(/closed/);
    const fresh = new HashPool({ size: 1, queue: 4 });
    useHashPool(fresh);
    expect(await dummyHash()).toMatch(/^scrypt\$/);
    await fresh.close();
  });
});

/**
 * Issue 39 finding 2 over HTTP: while every hashing thread is busy and the queue is full, one more
 * sign-in is answered 429 in the envelope with Retry-After, and another tenant's API and files are
 * served meanwhile (the hashes take no libuv thread).
 */
for (const dialect of dialects()) {
  describe(`sign-ins past the hashing queue on ${dialect}`, () => {
    let s: TestServer;
    const previous = hashPool();
    beforeAll(async () => {
      s = await startServer(dialect, { MODERATION_IMAGES: 'off' });
    });
    afterAll(async () => {
      useHashPool(previous);
      await s.close();
    });

    it('429 with Retry-After at the queue limit; other tenants served meanwhile; then signed in', async () => {
      const { pool, hold, go } = holdablePool(1, 1);
      useHashPool(pool);
      const { id } = await s.account(1, 'signers');
      await s.services.members.create(id, 'ann@example.com', 'owner', 'correct horse battery');
      await s.services.members.prepare();
      const other = await s.account(1, 'other tenant');
      hold();
      const signIn = () => s.call('POST', '/api/v1/auth/signin', { body: { email: 'ann@example.com', password: 'correct horse battery' } });
      const a = signIn();
      await until(() => pool.running === 1, 'the first sign-in hashing');
      const b = signIn();
      await until(() => pool.queued === 1, 'the second sign-in waiting');
      const c = await signIn();
      expect(c.status, JSON.stringify(c.body)).toBe(429);
      expect(c.headers.get('retry-after')).toBe('1');
      expect(c.body).toMatchObject({ code: 429, data: null, msg: expect.stringMatching(/retry in 1 s/) });
      // Another tenant meanwhile: its API and its files.
      expect((await s.call('GET', '/api/v1/user/balance', { key: other.key })).status).toBe(200);
      const up = await s.call('POST', '/api/file-base64-upload', {
        key: other.key,
        body: { base64Data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', fileName: 'dot.png' },
      });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      expect((await fetch(s.url + new URL(up.body.data.downloadUrl as string).pathname)).status).toBe(200);
      expect(pool.running + pool.queued).toBe(2);
      go();
      expect((await a).status).toBe(200);
      expect((await b).status).toBe(200);
      await pool.close();
    });
  });
}
