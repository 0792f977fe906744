import { statSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { openDatabase } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';

describe.each(dialects())('gengate CLI on %s', (dialect) => {
  let db: TestDb;
  let env: Record<string, string>;
  let server: Awaited<ReturnType<typeof spawnServe>>;
  beforeAll(async () => {
    db = await createTestDb(dialect);
    // AUTH_CACHE_MS=0: a disable or revoke by the CLI applies to the next request (the 1 s default is tested in auth.test.ts).
    env = { DATABASE_URL: db.url, DATA_DIR: db.dir, AUTH_CACHE_MS: '0' };
    server = await spawnServe(env);
  }, 240_000);
  afterAll(async () => {
    await stop(server.child);
    await db.drop();
  });

  it('creates the first-run account, prints the key once and saves it with mode 0600', async () => {
    const file = path.join(db.dir, 'first-api-key.txt');
    const key = readFileSync(file, 'utf8').trim();
    expect(key).toMatch(/^gg_/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain(`Authorization: Bearer ${key}`);
    const r = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${key}` } });
    expect((await r.json()).data.balance).toBe('10.0000');
    const list = JSON.parse((await gengate(['account', 'list', '--json'], env)).stdout);
    expect(list.accounts.map((a: { name: string }) => a.name)).toEqual(['default']);
  }, 240_000);

  it('manages accounts, keys and the ledger while the server runs', async () => {
    const created = await gengate(['account', 'create', '--name', 'cli co', '--balance', '3.5', '--json'], env);
    expect(created.code).toBe(0);
    const { account, apiKey } = JSON.parse(created.stdout);
    expect(account).toMatchObject({ name: 'cli co', balance: '3.5000', status: 'active' });
    const live = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect((await live.json()).data.balance).toBe('3.5000');

    const topup = JSON.parse((await gengate(['account', 'topup', account.id, '--amount', '1.25', '--note', 'wire', '--json'], env)).stdout);
    expect(topup.account.balance).toBe('4.7500');
    // The server answered this balance before (SQLite keeps it): it sees the CLI's commit.
    const topped = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect((await topped.json()).data.balance).toBe('4.7500');
    expect(JSON.parse((await gengate(['account', 'disable', account.id, '--json'], env)).stdout).account.status).toBe('disabled');
    const refused = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(refused.status).toBe(403);
    expect(JSON.parse((await gengate(['account', 'enable', account.id, '--json'], env)).stdout).account.status).toBe('active');
    expect(JSON.parse((await gengate(['account', 'show', account.id, '--json'], env)).stdout).account.balance).toBe('4.7500');

    const key = JSON.parse(
      (await gengate(['key', 'create', '--account', account.id, '--scopes', 'tasks:read,balance:read', '--models', 'suno-v6', '--json'], env)).stdout,
    );
    expect(key.key).toMatchObject({ scopes: ['tasks:read', 'balance:read'], models: ['suno-v6'] });
    expect(JSON.parse((await gengate(['key', 'list', '--account', account.id, '--json'], env)).stdout).keys).toHaveLength(2);
    expect((await gengate(['key', 'revoke', key.key.id], env)).code).toBe(0);
    const gone = await fetch(`${server.url}/api/v1/user/balance`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    expect(gone.status).toBe(401);

    const limits = JSON.parse((await gengate(['account', 'limits', account.id, '--write', '40', '--read', 'default', '--json'], env)).stdout);
    expect(limits.account.limits).toEqual({ write: 40, read: null });

    const ledger = JSON.parse((await gengate(['ledger', '--account', account.id, '--json'], env)).stdout);
    expect(ledger.entries.map((e: { kind: string; amount: string }) => [e.kind, e.amount])).toEqual([
      ['topup', '3.500000'],
      ['topup', '1.250000'],
    ]);
    const csv = (await gengate(['ledger', '--account', account.id, '--csv'], env)).stdout.trim().split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[2]).toMatch(/,topup,1\.250000,4\.750000,,wire$/);
  }, 180_000); // a dozen real CLI processes: slow on a busy 2-core machine

  it('reports errors on stderr with a non-zero exit', async () => {
    const bad = await gengate(['account', 'topup', 'acc_missing', '--amount', '1'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('no account "acc_missing"');
    expect(bad.stdout).toBe('');
    const amount = await gengate(['account', 'create', '--name', 'x', '--balance', 'ten'], env);
    expect(amount.code).not.toBe(0);
    expect(amount.stderr).toContain('--balance must be a USD amount');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});

describe.each(dialects())('migrations on %s', (dialect) => {
  it('are applied exactly once when two processes start at once', async () => {
    const db = await createTestDb(dialect);
    try {
      const env = { DATABASE_URL: db.url, DATA_DIR: db.dir };
      const results = await Promise.all([gengate(['migrate'], env), gengate(['migrate'], env), gengate(['migrate'], env)]);
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      expect(results.filter((r) => r.stdout.includes('applied now')).length).toBe(1);
      const database = openDatabase(db.url);
      const rows = await database.db.selectFrom('gengate_migrations').selectAll().execute();
      await database.close();
      expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await db.drop();
    }
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});

describe('settings', () => {
  it('stop the start with exit code 2 and a message naming the variable and what is allowed', async () => {
    const r = await gengate(['serve'], { PORT: 'eighty', ERROR_STYLE: 'loud', DATABASE_PREPARED: 'maybe' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('PORT: must be a whole number from 0 to 65535 (got "eighty")');
    expect(r.stderr).toContain('DATABASE_PREPARED: must be true or false (also 1/0, yes/no) (got "maybe")');
    expect(r.stderr).toMatch(/ERROR_STYLE: .*"default"\|"reference".*\(got "loud"\)/);
  }, 240_000);

  it('are read from a GENGATE_CONFIG file, with the environment winning', async () => {
    const db = await createTestDb('sqlite');
    try {
      const file = path.join(db.dir, 'gengate.json');
      writeFileSync(file, JSON.stringify({ DATABASE_URL: db.url, DATA_DIR: db.dir, FIRST_RUN_ACCOUNT: false }));
      const r = await gengate(['--new-database', 'account', 'list', '--json'], { GENGATE_CONFIG: file });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ accounts: [] });
      writeFileSync(file, JSON.stringify({ PORTT: 1 }));
      const typo = await gengate(['account', 'list'], { GENGATE_CONFIG: file });
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('unknown setting PORTT');
    } finally {
      await db.drop();
    }
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
