import type { Config } from './config.js';
import { openDatabase, type Database } from './store/db.js';
import { migrate } from './store/migrate.js';
import { Ledger } from './billing/index.js';
import { Accounts, Authenticator } from './accounts/index.js';
import { systemClock, type Clock } from './clock.js';
import { loadCatalog, type Catalog } from './catalog/index.js';

/** Everything the routes, the CLI and the engine use; built in one place from the settings. */
export interface Services {
  config: Config;
  clock: Clock;
  database: Database;
  ledger: Ledger;
  accounts: Accounts;
  auth: Authenticator;
  catalog: Catalog;
  close(): Promise<void>;
}

/** The one place that picks implementations (database dialect, clock, ...) and runs migrations. */
export async function buildServices(config: Config, opts: { clock?: Clock } = {}): Promise<Services> {
  const clock = opts.clock ?? systemClock;
  const catalog = loadCatalog(config); // before the database: a bad catalog file stops the start at once
  const database = openDatabase(config.DATABASE_URL);
  try {
    await migrate(database);
  } catch (e) {
    await database.close();
    throw e;
  }
  const ledger = new Ledger(clock);
  const accounts = new Accounts(database, ledger, clock);
  const auth = new Authenticator(database, clock);
  return {
    config,
    clock,
    database,
    ledger,
    accounts,
    auth,
    catalog,
    close: () => database.close(),
  };
}
