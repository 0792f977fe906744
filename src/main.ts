import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { AppError } from './errors.js';
import { buildServices, type Services } from './services.js';
import { addAdminCommands } from './cli/admin.js';
import { migrate } from './store/migrate.js';
import { openDatabase } from './store/db.js';

function fail(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`gengate: ${e.message}\n`);
    process.exit(2);
  }
  const msg = e instanceof AppError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`gengate: ${msg}\n`);
  process.exit(1);
}

/** Runs one operator command against the configured database, then closes it. */
async function run(fn: (s: Services) => Promise<void>): Promise<void> {
  let services: Services | undefined;
  try {
    // Operator commands run no engine: the upstream routes (and their credential settings) are not needed.
    services = await buildServices(loadConfig(), { upstreams: false });
    await fn(services);
  } catch (e) {
    await services?.close().catch(() => {});
    fail(e);
  }
  await services.close();
}

const program = new Command('gengate').description('GenGate: pay-per-run AI generation gateway').showHelpAfterError();
program
  .command('serve')
  .description('run the HTTP service (what npm start runs)')
  .option('--role <role>', 'api (HTTP only), worker (engine, callbacks, sweeps; health and metrics on PORT) or all; overrides ROLE')
  .action(async (opts: { role?: string }) => {
    try {
      // The flag goes through the settings schema, so a wrong value gets the same message as ROLE.
      const config = loadConfig(opts.role === undefined ? process.env : { ...process.env, ROLE: opts.role });
      const { serve } = await import('./cli/serve.js'); // the HTTP stack loads only for serve
      await serve(config);
    } catch (e) {
      fail(e);
    }
  });
program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    try {
      const database = openDatabase(loadConfig().DATABASE_URL);
      const applied = await migrate(database).finally(() => database.close());
      process.stdout.write(`migrations up to date${applied.length ? ` (applied now: ${applied.join(', ')})` : ''}\n`);
    } catch (e) {
      fail(e);
    }
  });
addAdminCommands(program, run, (text) => process.stdout.write(`${text}\n`));

program.parseAsync(process.argv).catch(fail);
