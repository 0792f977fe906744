import { statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildServices, type Services } from '../../src/services.js';
import { gengate, spawnServe, stop } from '../helpers/cli.js';
import { createTestDb, dialects, type TestDb } from '../helpers/db.js';

for (const dialect of dialects()) {
  describe(`secrets at rest on ${dialect}`, () => {
    let db: TestDb;
    const open: Services[] = [];
    const build = async (env: Record<string, string> = {}) => {
      const s = await buildServices(loadConfig({ DATA_DIR: db.dir, DATABASE_URL: db.url, LOG_LEVEL: 'silent', FIRST_RUN_ACCOUNT: 'false', ...env }));
      open.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
      await db?.drop();
    });

    it('keeps webhook secrets sealed in the database and gives the operator the plain secret', async () => {
      db = await createTestDb(dialect);
      const s = await build();
      const { account } = await s.accounts.create('sealed');
      const row = await s.database.db.selectFrom('accounts').select('webhook_secret').where('id', '=', account.id).executeTakeFirstOrThrow();
      expect(row.webhook_secret).toMatch(/^sealed:v1:/);
      expect(row.webhook_secret).not.toContain(account.webhookSecret!.slice(6));
      expect((await s.accounts.get(account.id)).webhookSecret).toBe(account.webhookSecret);
      expect(await s.accounts.webhookSecret(account.id)).toBe(account.webhookSecret);
    });

    it('seals a secret stored before sealing existed at the next start, and re-seals under a new key while the old one is PREVIOUS', async () => {
      db = await createTestDb(dialect);
      const first = await build({ GENGATE_SECRET_KEY: 'first-key-'.repeat(4) });
      const { account } = await first.accounts.create('legacy');
      await first.database.tx((w) => w.updateTable('accounts').set({ webhook_secret: 'whsec_plain_legacy' }).where('id', '=', account.id).execute());
      await first.close();
      open.splice(0);
      const again = await build({ GENGATE_SECRET_KEY: 'first-key-'.repeat(4) });
      const stored = async (s: Services) =>
        (await s.database.db.selectFrom('accounts').select('webhook_secret').where('id', '=', account.id).executeTakeFirstOrThrow()).webhook_secret;
      expect(await stored(again)).toMatch(new RegExp(`^sealed:v1:${again.secrets.keyId}:`));
      expect(await again.accounts.webhookSecret(account.id)).toBe('whsec_plain_legacy');
      await again.close();
      open.splice(0);
      const rotated = await build({ GENGATE_SECRET_KEY: 'second-key'.repeat(4), GENGATE_SECRET_KEY_PREVIOUS: 'first-key-'.repeat(4) });
      expect(await stored(rotated)).toMatch(new RegExp(`^sealed:v1:${rotated.secrets.keyId}:`));
      expect(await rotated.accounts.webhookSecret(account.id)).toBe('whsec_plain_legacy');
      expect(await rotated.accounts.sealedSecrets()).toEqual({ [rotated.secrets.keyId]: 1 });
    }, 240_000);

    it('refuses to start with a key that cannot open the stored secrets, naming the setting', async () => {
      db = await createTestDb(dialect);
      const s = await build({ GENGATE_SECRET_KEY: 'first-key-'.repeat(4) });
      await s.accounts.create('a');
      const r = await gengate(['account', 'list'], { DATA_DIR: db.dir, DATABASE_URL: db.url, GENGATE_SECRET_KEY: 'other-key-'.repeat(4) });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/sealed with key [0-9a-f]{8}, which this process does not have; every process needs the same GENGATE_SECRET_KEY/);
      expect(r.stderr).not.toMatch(/at .*\.ts/);
    }, 240_000);
  });
}

describe('files at rest', () => {
  let db: TestDb;
  afterEach(async () => {
    await db?.drop();
  });

  it('gengate serve makes its data folder, database, key file and upload folder owner-only', async () => {
    db = await createTestDb('sqlite');
    const dataDir = path.join(db.dir, 'fresh');
    const { child } = await spawnServe({ DATA_DIR: dataDir, DATABASE_URL: `sqlite:${path.join(dataDir, 'gengate.db')}` });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(dataDir, 'gengate.db')).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dataDir, 'first-api-key.txt')).mode & 0o777).toBe(0o600);
    } finally {
      await stop(child);
    }
  }, 240_000);
});
