import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { AppError } from './errors.js';
import { buildServices, type Services } from './services.js';
import { serve } from './cli/serve.js';
import { addAdminCommands } from './cli/admin.js';
import { migrate } from './store/migrate.js';

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
    services = await buildServices(loadConfig());
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
  .action(async () => {
    try {
      await serve(loadConfig());
    } catch (e) {
      fail(e);
    }
  });
program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(() =>
    run(async (s) => {
      const applied = await migrate(s.database);
      process.stdout.write(`migrations up to date${applied.length ? ` (applied now: ${applied.join(', ')})` : ''}\n`);
    }),
  );
addAdminCommands(program, run, (text) => process.stdout.write(`${text}\n`));

program.parseAsync(process.argv).catch(fail);
