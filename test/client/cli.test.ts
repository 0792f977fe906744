import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gengate } from '../helpers/cli.js';
import { makeStill } from '../media/helpers.js';
import { MovableClock, eventually } from '../tasks/support.js';
import { sdk, startPublicServer } from './support.js';

// The client commands talk HTTP only, so one database dialect is enough here: the server side of
// every call is covered on both dialects by sdk.test.ts.
describe('gengate client commands (run, tasks, upload, balance, login)', () => {
  let s: Awaited<ReturnType<typeof startPublicServer>>;
  let key: string;
  let dir: string;
  /** Settings a server would need, all wrong: a client command must not read them. */
  const serverless = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: 'not-a-port', DATA_DIR: '/nonexistent/gengate' };
  const cli = (args: string[], env: Record<string, string> = {}) =>
    gengate(args, { ...serverless, GENGATE_CONFIG_DIR: path.join(dir, 'config'), GENGATE_POLL_MS: '30', ...env });
  /** The key and address from the environment instead of a login. */
  const keyed = () => ({ GENGATE_CONFIG_DIR: path.join(dir, 'nothing-here'), GENGATE_API_KEY: key, GENGATE_BASE_URL: s.publicUrl });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gengate-cli-'));
    s = await startPublicServer('sqlite', { LOCAL_GENERATE_MS: '400' });
    key = (await s.account(20)).key;
  });
  afterAll(async () => {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('login keeps the key and address in the config folder, readable by the owner only; a wrong key is not kept', async () => {
    const wrong = await cli(['login', '--key', 'gg_wrong', '--base-url', s.publicUrl]);
    expect(wrong.code, wrong.stderr).toBe(3);
    await expect(stat(path.join(dir, 'config/client.json'))).rejects.toThrow();

    const r = await cli(['login', '--key', key, '--base-url', s.publicUrl]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/logged in to http:\/\/127\.0\.0\.1:\d+ \(balance 20\.0000 USD\)/);
    const file = path.join(dir, 'config/client.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ apiKey: key, baseUrl: s.publicUrl });

    const b = await cli(['balance']);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe('20.0000 USD (1800 RUB)\n');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('run shows a progress line (state, elapsed, price) and downloads the results to --out', async () => {
    // A generation of 10 minutes on a clock the test moves: the CLI sees it generating however slow
    // the machine (in a real 400 ms one a busy engine or CLI can miss that state); once the CLI has
    // had an answer saying so, the clock moves on.
    const clock = new MovableClock();
    const g = await startPublicServer('sqlite', { LOCAL_GENERATE_MS: '600000' }, { clock });
    try {
      const gkey = (await g.account(20)).key;
      const out = path.join(dir, 'results');
      const running = cli(['run', 'nano-banana-2', '--prompt', 'a lighthouse at dusk', '--set', 'resolution=1K', '--set', 'aspect_ratio=16:9', '--out', out], {
        GENGATE_CONFIG_DIR: path.join(dir, 'nothing-here'),
        GENGATE_API_KEY: gkey,
        GENGATE_BASE_URL: g.publicUrl,
      });
      // Bounds for a hang only: the CLI is a new process loading the sources, slow to start on a busy machine.
      await eventually(
        async () => (await g.services.database.db.selectFrom('tasks').select('id').where('state', '=', 'generating').execute()).length === 1,
        60_000,
        'the task to be generating',
      );
      // The CLI asks one question at a time: the second answer after this moment answers a question asked after it.
      const seen = g.answered();
      await eventually(() => g.answered() >= seen + 2, 60_000, 'two answers to the CLI');
      clock.advance(600_000);
      const r = await running;
      expect(r.code, r.stderr).toBe(0);
      const taskId = /task (tk_\S+)/.exec(r.stderr)![1]!;
      expect(r.stderr).toMatch(/^generating( \d+%)? · \d+\.\d s · \$0\.\d{3}$/m);
      expect(r.stderr).toMatch(/^success · \d+\.\d s · \$0\.\d{3}$/m);
      const files = await readdir(out);
      expect(files).toEqual([`${taskId}-image.png`]);
      expect(r.stdout.trim()).toBe(path.join(out, files[0]!));
      expect((await readFile(path.join(out, files[0]!))).subarray(1, 4).toString()).toBe('PNG');
      const task = await sdk(g, gkey).tasks.get(taskId);
      expect(JSON.parse(task.param).input).toEqual({ prompt: 'a lighthouse at dusk', resolution: '1K', aspect_ratio: '16:9' });
    } finally {
      await g.close();
    }
  }, 240_000); // a run of the real CLI, a new process loading the sources: slow to start on a busy machine

  it('run --file uploads the photo into the model field; --json prints the result for scripts', async () => {
    const photo = await makeStill(path.join(dir, 'photo.png'));
    const r = await cli(['run', 'nano-banana-2', '--prompt', 'like this', '--file', photo, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ model: 'nano-banana-2', files: [{ kind: 'image', name: 'image.png' }], costUsd: expect.any(String), saved: [] });
    expect(JSON.parse(result.task.param).input.image_input).toEqual([expect.stringMatching(/\/files\/[A-Za-z0-9_-]{22}\/photo\.png$/)]);
  });

  it('tasks ls, get, wait and cancel; upload', async () => {
    const gg = sdk(s, key);
    await gg.run('nano-banana-2', { prompt: 'listed' });
    const ls = await cli(['tasks', 'ls', '--json', '--limit', '1'], keyed());
    expect(ls.code, ls.stderr).toBe(0);
    const [latest] = JSON.parse(ls.stdout);
    expect(latest.state).toBe('success');
    const get = await cli(['tasks', 'get', latest.taskId], keyed());
    expect(get.stdout).toContain(latest.taskId);
    expect(get.stdout).toMatch(/\/files\/.+\/image\.png/);

    const { taskId } = await gg.tasks.create('nano-banana-2', { prompt: 'wait for me' });
    const out = path.join(dir, 'waited');
    const wait = await cli(['tasks', 'wait', taskId, '--out', out], keyed());
    expect(wait.code, wait.stderr).toBe(0);
    expect(await readdir(out)).toEqual([`${taskId}-image.png`]);

    // A task the local backend never finishes (its `hang` fault), so it is still running when the command cancels it.
    const doomed = await gg.tasks.create('nano-banana-2', { prompt: 'gengate:fail=hang never mind' });
    const cancel = await cli(['tasks', 'cancel', doomed.taskId], keyed());
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(`${doomed.taskId} cancelled, refunded\n`);
    const again = await cli(['tasks', 'cancel', doomed.taskId], keyed());
    expect(again.code).toBe(5);
    expect(again.stderr).toMatch(/task_not_cancellable, HTTP 409/);

    const photo = await makeStill(path.join(dir, 'upload.png'));
    const up = await cli(['upload', photo, '--json'], keyed());
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toEqual([expect.objectContaining({ kind: 'image', fileName: 'upload.png' })]);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('exits with a code per kind of failure', async () => {
    const empty = { GENGATE_CONFIG_DIR: path.join(dir, 'nothing-here') };
    const poor = (await s.account(0.001)).key;
    const cases: Array<[string, string[], Record<string, string>, number, RegExp]> = [
      ['no key', ['balance'], empty, 2, /no API key/],
      ['a wrong option', ['run', 'nano-banana-2', '--promt', 'x'], keyed(), 2, /promt/],
      ['a wrong key', ['balance', '--key', 'gg_wrong'], keyed(), 3, /authentication_error/],
      ['too little money', ['run', 'wan-3.0', '--prompt', 'x', '--key', poor], keyed(), 4, /payment_required/],
      ['an unknown model', ['run', 'no-such-model', '--prompt', 'x'], keyed(), 5, /unsupported_model/],
      ['a wrong value', ['run', 'nano-banana-2', '--prompt', 'x', '--set', 'resolution=9K'], keyed(), 5, /resolution/],
      ['a failed task', ['run', 'nano-banana-2', '--prompt', 'gengate:fail=501 x'], keyed(), 6, /failed \(501\)/],
      ['a timeout', ['run', 'nano-banana-2', '--prompt', 'slow', '--timeout', '0.05'], keyed(), 7, /still \w+ after the timeout/],
      ['no server', ['balance', '--base-url', 'http://127.0.0.1:9'], keyed(), 9, /could not reach/],
    ];
    for (const [what, args, env, code, message] of cases) {
      const r = await cli(args, env);
      expect(r.code, `${what}: ${r.stderr}`).toBe(code);
      expect(r.stderr, what).toMatch(message);
    }
    const json = await cli(['run', 'no-such-model', '--json'], keyed());
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, exitCode: 5, error: 'unsupported_model', status: 400, requestId: expect.any(String) });
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
