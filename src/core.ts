import { ConfigError, type Config } from './config.js';
import type { Clock } from './clock.js';
import { openDatabase, type Database } from './store/index.js';
import { DatabaseTooNew, migrate } from './store/index.js';
import { AlertSettings, Ledger } from './billing/index.js';
import { Accounts, Authenticator } from './accounts/index.js';
import { LiveCatalog, loadCatalog, ModelSwitches, type Catalog } from './catalog/index.js';
import { SecretBox, SecretKeyMissing, loadSecretKeys } from './secrets/index.js';
import { HashPool, Mailer, Members, useHashPool } from './members/index.js';

/** A start-up step failed for a reason the operator can act on; main prints the message without a stack and exits with 1. */
export class StartError extends Error {}

/**
 * What a start has opened so far, closed newest first: when a later step fails (so a failed start
 * leaves no pool, connection, timer or thread behind) and when the process stops.
 */
export class Opened {
  private readonly closers: Array<() => unknown> = [];

  /** Registers how to close `thing`, just opened; returns it. */
  add<T>(thing: T, close: (thing: T) => unknown): T {
    this.closers.push(() => close(thing));
    return thing;
  }

  /** Closes everything registered, newest first; a close that fails does not keep the rest open (the first error is thrown after). */
  async close(): Promise<void> {
    let first: unknown;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  }
}

/** Runs one start-up step; a failure becomes a StartError naming the step (a ConfigError or SecretKeyMissing already names its setting and stays as it is: exit 2). */
export async function step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ConfigError || e instanceof SecretKeyMissing || e instanceof StartError) throw e;
    throw new StartError(`cannot start: ${name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/** What every process opens first and all that operator commands need: the migrated database, ledger, secrets, accounts and model switches. */
export interface Core {
  config: Config;
  clock: Clock;
  database: Database;
  ledger: Ledger;
  /** The accounts' low-balance alerts (decision 1905). */
  alerts: AlertSettings;
  accounts: Accounts;
  auth: Authenticator;
  /** Members of accounts, sessions, invites and password resets (decision 1903). */
  members: Members;
  /** Seals the secrets kept in the database (webhook secrets). */
  secrets: SecretBox;
  /** The catalog file as loaded, before the operator's switches (routes and metrics are built from it). */
  fileCatalog: Catalog;
  catalog: Catalog;
  /** The operator's model switches (CLI / admin API); `catalog` reflects them. */
  models: ModelSwitches;
  /** The definition files with the stored definitions on top, reloaded live (decision 3305); `catalog` reflects it. */
  definitions: LiveCatalog;
  /** Closes everything the start opened, newest first. */
  close(): Promise<void>;
}

/**
 * Opens the core, registering what it opens in `opened`; on failure closes `opened` and throws
 * (ConfigError or StartError). `runsTasks`: a process that runs tasks must know every migration
 * the database has (a newer one may change what a task row means), so a newer database is refused.
 */
export async function openCore(config: Config, clock: Clock, opened = new Opened(), runsTasks = false): Promise<Core> {
  try {
    const fileCatalog = loadCatalog(config); // before the database: a bad catalog file stops the start at once
    const database = await step('database', async () => {
      const db = opened.add(
        openDatabase(config.DATABASE_URL, { prepared: config.DATABASE_PREPARED, slowTxMs: config.DATABASE_SLOW_TX_MS, guards: config.DATABASE_GUARDS }),
        (d) => d.close(),
      );
      try {
        await migrate(db, { refuseNewer: runsTasks });
      } catch (e) {
        throw e instanceof DatabaseTooNew ? new ConfigError(e.message) : e;
      }
      return db;
    });
    const definitions = opened.add(new LiveCatalog(database, fileCatalog, clock, config.MODEL_SWITCH_CACHE_MS), (d) => d.stop());
    await step('stored model definitions', () => definitions.refresh());
    const models = opened.add(new ModelSwitches(database, definitions.catalog, clock), (m) => m.stop());
    definitions.onChange((catalog) => models.rebase(catalog));
    await step('model switches', () => models.refresh());
    const ledger = new Ledger(clock);
    const auth = new Authenticator(database, clock, config.AUTH_CACHE_MS);
    const secrets = new SecretBox(await step('secret key', () => loadSecretKeys(config)));
    const accounts = new Accounts(
      database,
      ledger,
      clock,
      secrets,
      () => auth.forget(),
      (name) => models.catalog.find(name) !== undefined,
    );
    await step('sealing stored secrets', () => accounts.sealStoredSecrets());
    // Password hashes run on their own threads, with a bounded queue (decision 2305).
    // Closed with the rest: a command that hashed a password exits when it is done.
    useHashPool(opened.add(new HashPool({ size: config.PASSWORD_HASH_THREADS, queue: config.PASSWORD_HASH_QUEUE }), (p) => p.close()));
    const members = new Members(database, clock, accounts, {
      sessionTtlMs: config.SESSION_TTL_HOURS * 3600_000,
      signup: config.SIGNUP,
      publicUrl: config.PUBLIC_BASE_URL,
      mailer: config.SMTP_URL ? new Mailer(config.SMTP_URL, config.MAIL_FROM) : null,
    });
    const alerts = new AlertSettings(database);
    return {
      config,
      clock,
      database,
      ledger,
      alerts,
      accounts,
      auth,
      members,
      secrets,
      fileCatalog,
      catalog: models.catalog,
      models,
      definitions,
      close: () => opened.close(),
    };
  } catch (e) {
    await opened.close().catch(() => {}); // the start's own error is the one worth reporting
    throw e;
  }
}
