import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Services } from '../services.js';
import { MICROS_PER_USD } from '../billing/index.js';

/**
 * On an empty database: creates account `default` with 10 USD and a key, prints the key once
 * with a ready curl line and writes it to DATA_DIR/first-api-key.txt (mode 0600). Safe when two
 * processes start at once: the check and the insert run under one lock.
 */
export async function firstRun(services: Services, print: (line: string) => void): Promise<boolean> {
  const { database, accounts, config } = services;
  const created = await database.tx(async (trx) => {
    await database.lock(trx, 'gengate:first-run');
    const row = await trx
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(row.n) > 0) return null;
    return accounts.createIn(trx, 'default', 10 * MICROS_PER_USD);
  });
  if (!created) return false;
  mkdirSync(config.DATA_DIR, { recursive: true });
  const file = path.join(config.DATA_DIR, 'first-api-key.txt');
  writeFileSync(file, `${created.apiKey}\n`, { mode: 0o600 });
  print('');
  print(`First run: created account "default" (${created.account.id}) with 10.00 USD.`);
  print(`API key (shown once, also saved to ${file}):`);
  print(`  ${created.apiKey}`);
  print('Try it:');
  print(`  curl -H "Authorization: Bearer ${created.apiKey}" ${config.PUBLIC_BASE_URL}/api/v1/user/balance`);
  print(`Web console: ${config.PUBLIC_BASE_URL}/ (sign in with the key for a look, or as a member to run models:`);
  print(`  npx gengate member create --account ${created.account.id} --email you@example.com --role owner)`);
  print('');
  return true;
}
