import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/index.js';
import { gengate } from '../helpers/cli.js';
import { createTestDb, type TestDb } from '../helpers/db.js';
import { startKieFake } from '../fakes/kie.js';
import { freePort } from '../helpers/server.js';

/** `gengate doctor` (decision 2604), run as the real command: one line per check, a fix on each that is not ok, exit 1 when one failed. */
describe('gengate doctor', () => {
  let db: TestDb | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    await db?.drop();
    db = undefined;
  });

  /** A migrated SQLite data folder, owner-only as the server makes it. */
  async function dataFolder(upTo?: number): Promise<Record<string, string>> {
    db = await createTestDb('sqlite');
    chmodSync(db.dir, 0o700);
    const database = openDatabase(db.url);
    await migrate(database, upTo === undefined ? {} : { migrations: MIGRATIONS.filter((m) => m.version < upTo) });
    await database.close();
    chmodSync(db.url.slice('sqlite:'.length), 0o600);
    return { DATA_DIR: db.dir, DATABASE_URL: db.url };
  }

  /** A process whose /healthz answers with a Date header `offsetMs` off this machine's clock. */
  async function peer(offsetMs: number): Promise<string> {
    const server: Server = createServer((_req, res) => res.writeHead(200, { date: new Date(Date.now() + offsetMs).toUTCString() }).end('{"status":"ok"}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const a = server.address();
    return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  }

  it('a healthy installation: every line ok, upstream routes reachable with their credit, exit 0', async () => {
    // Not KIE_API_KEY: that one also turns on the shipped kie.ai market routes (decision 3311), which go to api.kie.ai itself.
    const env = await dataFolder();
    const kie = await startKieFake('kie-key');
    closers.push(() => kie.close());
    const catalog = path.join(db!.dir, 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'seedream-pro': { routes: [{ backend: 'kie', name: 'kie-main', key_env: 'KIE_TEST_KEY', base_url: kie.url, min_credit: 50 }, { backend: 'local' }] },
        },
      }),
    );
    const r = await gengate(['doctor', '--peer', await peer(0)], { ...env, GENGATE_CATALOG: catalog, KIE_TEST_KEY: 'kie-key' });
    expect(r.stderr).toBe('');
    expect(r.code, r.stdout).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.filter((l) => !/^(ok {2}|-- {2}) /.test(l)).slice(0, -1)).toEqual([]);
    expect(lines).toEqual(
      expect.arrayContaining([
        'ok   configuration: settings parse (role all, database sqlite)',
        `ok   migrations: all ${MIGRATIONS.length} applied`,
        expect.stringMatching(/^ok {3}ffmpeg: .* \((npm|system), version .*\)$/),
        expect.stringMatching(/^ok {3}ffprobe: /),
        expect.stringMatching(new RegExp(`^ok   route kie-main: ${kie.url} answers \\(HTTP \\d+, \\d+ ms\\); credit 1000$`)),
        expect.stringMatching(/^ok {3}clock: http:\/\/127\.0\.0\.1:\d+: \+0 ms against this machine \(to within 1 s\)$/),
        expect.stringMatching(/^ok {3}permissions: data folder: .* mode 700$/),
        expect.stringMatching(/^-- {3}redis: REDIS_URL not set/),
      ]),
    );
    expect(lines.at(-1)).toBe('all passed');
  }, 240_000);

  it('says what is wrong and how to fix it: pending migrations, a missing credential, an unreachable route, low credit, Redis down, a skewed clock, open permissions', async () => {
    const env = await dataFolder(MIGRATIONS.at(-1)!.version);
    chmodSync(db!.dir, 0o755);
    const kie = await startKieFake('kie-key');
    closers.push(() => kie.close());
    kie.setCredit(5);
    const catalog = path.join(db!.dir, 'catalog.json');
    const gone = `http://127.0.0.1:${await freePort()}`;
    writeFileSync(
      catalog,
      JSON.stringify({
        models: {
          'seedream-pro': { routes: [{ backend: 'kie', name: 'kie-low', key_env: 'KIE_TEST_KEY', base_url: kie.url, min_credit: 50 }, { backend: 'local' }] },
          'seedream-flash': {
            routes: [{ backend: 'fal', name: 'fal-gone', model: 'fal-ai/x', key_env: 'FAL_KEY', base_url: gone }, { backend: 'local' }],
          },
          'nano-banana-2': { routes: [{ backend: 'replicate', name: 'rep-nokey', model: 'a/b', key_env: 'REPLICATE_API_TOKEN' }, { backend: 'local' }] },
        },
      }),
    );
    const r = await gengate(['doctor', '--peer', await peer(3_600_000)], {
      ...env,
      GENGATE_CATALOG: catalog,
      KIE_TEST_KEY: 'kie-key',
      FAL_KEY: 'fal-key',
      REDIS_URL: 'redis://127.0.0.1:9',
    });
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `WARN migrations: 1 not applied yet (${MIGRATIONS.at(-1)!.version}) -> fix: run \`gengate migrate\` (or start one process: it migrates)`,
        "FAIL route rep-nokey: REPLICATE_API_TOKEN is not set -> fix: set REPLICATE_API_TOKEN to the provider's API key (workers refuse to start without it)",
        expect.stringMatching(/^FAIL route fal-gone: http:\/\/127\.0\.0\.1:\d+ does not answer \(.*ECONNREFUSED.*\) -> fix: check DNS, the firewall/),
        expect.stringMatching(/^WARN route kie-low: .*; credit 5, below min_credit 50: the route is skipped -> fix: top up the provider account$/),
        expect.stringMatching(/^FAIL redis: .* -> fix: check REDIS_URL and that Redis runs/),
        expect.stringMatching(/^WARN clock: http:\/\/127\.0\.0\.1:\d+: \+3(599|600)\d{3} ms against this machine \(to within 1 s\) -> fix: run an NTP client/),
        `WARN permissions: data folder: ${db!.dir} is mode 755: others may read it -> fix: chmod 700 ${db!.dir}`,
      ]),
    );
    expect(lines.at(-1)).toMatch(/^3 failed, 4 to look at$/);
  }, 240_000);

  it('a wrong setting is one failed line naming it, and nothing else is checked', async () => {
    const r = await gengate(['doctor'], { PORT: 'http' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      'FAIL configuration: invalid settings:; PORT: must be a whole number from 0 to 65535 (got "http") -> fix: correct the settings named (README, Configuration); nothing else is checked until they parse\n1 failed, 0 to look at\n',
    );
  }, 240_000);
});
