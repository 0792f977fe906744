import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gengate } from '../helpers/cli.js';

/** Issue 17 item 6: an operator command that finds no database where the server keeps it does not quietly make an empty one. */
describe('operator commands and a missing database', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-cli-db-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses, naming the path and the settings, and creates nothing', async () => {
    const dataDir = path.join(dir, 'elsewhere');
    const r = await gengate(['account', 'list'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no database at ${path.join(dataDir, 'gengate.db')}`);
    expect(r.stderr).toMatch(/set DATA_DIR \(or DATABASE_URL\).*--new-database/);
    expect(existsSync(path.join(dataDir, 'gengate.db'))).toBe(false);
  }, 240_000);

  it('makes the empty database when asked with --new-database', async () => {
    const dataDir = path.join(dir, 'fresh');
    const r = await gengate(['--new-database', 'account', 'list', '--json'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ accounts: [] });
    expect(existsSync(path.join(dataDir, 'gengate.db'))).toBe(true);
    // From then on the database is there and commands run without the flag.
    expect((await gengate(['account', 'list', '--json'], { DATA_DIR: dataDir, DATABASE_URL: '' })).code).toBe(0);
  }, 240_000); // several runs of the real CLI or server, each a new process loading the sources: slow on a busy machine
});
