import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';
import { gengate } from '../helpers/cli.js';

describe.each(dialects())('gengate account alert and rotate-secret on %s', (dialect) => {
  let db: TestDb;
  let env: Record<string, string>;
  let id: string;
  beforeAll(async () => {
    db = await createTestDb(dialect);
    env = { DATABASE_URL: db.url, DATA_DIR: db.dir };
    const created = await gengate(['--new-database', 'account', 'create', '--name', 'alerts', '--balance', '8', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    id = JSON.parse(created.stdout).account.id;
  }, 240_000);
  afterAll(async () => {
    await db.drop();
  });

  it('sets, shows and turns off the alert; refuses a bad level naming the flag', async () => {
    const set = await gengate(['account', 'alert', id, '--level', '5', '--url', 'https://example.com/hooks/balance', '--email', 'on', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout).alert).toEqual({ level: '5.0000', url: 'https://example.com/hooks/balance', email: true, armed: true });
    const shown = await gengate(['account', 'alert', id], env);
    expect(shown.stdout).toContain('alert level=5.0000  url=https://example.com/hooks/balance  email=on  armed');
    const off = await gengate(['account', 'alert', id, '--level', 'off', '--url', 'none', '--json'], env);
    expect(JSON.parse(off.stdout).alert).toEqual({ level: null, url: null, email: true, armed: false });
    const bad = await gengate(['account', 'alert', id, '--level', '-3'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--level');
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine

  it('rotates the webhook secret and shows the previous one with its end', async () => {
    const before = JSON.parse((await gengate(['account', 'show', id, '--json'], env)).stdout).account.webhookSecret;
    const r = await gengate(['account', 'rotate-secret', id, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.secret).toMatch(/^whsec_/);
    expect(out.secret).not.toBe(before);
    expect(out.previous.secret).toBe(before);
    expect(Date.parse(out.previous.validUntil) - Date.now()).toBeGreaterThan(23 * 3600_000);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
