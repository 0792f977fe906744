import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { AppError } from './errors.js';
import { openCore, StartError, type Core } from './core.js';
import { systemClock } from './clock.js';
import { addAdminCommands, addBackupCommands, addDoctorCommand, addMemberCommands, addModelsCommands, addMoneyCommands, loadServe } from './cli/index.js';
import { migrate } from './store/index.js';
import { openDatabase } from './store/index.js';
import { SecretKeyMissing } from './secrets/index.js';

function fail(e: unknown): never {
  if (e instanceof ConfigError || e instanceof SecretKeyMissing) {
    process.stderr.write(`gengate: ${e.message}\n`);
    process.exit(2);
  }
  // A StartError or AppError says what to do; anything else is a bug, and its stack helps find it.
  const msg = e instanceof StartError || e instanceof AppError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`gengate: ${msg}\n`);
  process.exit(1);
}

/** Runs one operator command against the configured database, then closes it. */
async function run(fn: (s: Core) => Promise<void>): Promise<void> {
  let core: Core | undefined;
  try {
    // Operator commands need only the core: no engine, HTTP, Redis or upstream routes (nor their
    // credentials), and none of their modules are loaded, so a command starts fast.
    const config = loadConfig();
    refuseNewDatabase(config.DATABASE_URL, program.opts<{ newDatabase?: boolean }>().newDatabase === true);
    core = await openCore(config, systemClock);
    await fn(core);
  } catch (e) {
    await core?.close().catch(() => {});
    fail(e);
  }
  await core.close();
}

/**
 * An operator command run from another folder (or with other settings) than the server would
 * otherwise make a new, empty SQLite database and act on it: a top-up that lands nowhere. Refused
 * unless asked for with --new-database.
 */
function refuseNewDatabase(url: string, asked: boolean): void {
  if (asked || !url.startsWith('sqlite:')) return;
  const file = url.slice('sqlite:'.length);
  if (file === ':memory:' || existsSync(file)) return;
  throw new StartError(
    `no database at ${path.resolve(file)}: run the command where the server runs, or set DATA_DIR (or DATABASE_URL) as the server has it; --new-database makes an empty one there`,
  );
}

const program = new Command('gengate').description('GenGate: pay-per-run AI generation gateway').showHelpAfterError();
program.option('--new-database', 'let an operator command create an empty SQLite database where none is found');
program
  .command('serve')
  .description('run the HTTP service (what npm start runs)')
  .option('--role <role>', 'api (HTTP only), worker (engine, callbacks, sweeps; health and metrics on PORT) or all; overrides ROLE')
  .action(async (opts: { role?: string }) => {
    try {
      // The flag goes through the settings schema, so a wrong value gets the same message as ROLE.
      const config = loadConfig(opts.role === undefined ? process.env : { ...process.env, ROLE: opts.role });
      const serve = await loadServe(); // the HTTP stack loads only for serve
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
program
  .command('secrets')
  .description('secrets at rest (docs/operations.md)')
  .command('status')
  .description('the id of the key that seals stored secrets, and how many are sealed with which key')
  .action(() =>
    run(async (s) => {
      const counts = await s.accounts.sealedSecrets();
      process.stdout.write(
        `sealing key: ${s.secrets.keyId}\n${Object.entries(counts)
          .map(([k, n]) => `${k}: ${n}`)
          .join('\n')}\n`,
      );
    }),
  );
addAdminCommands(program, run, (text) => process.stdout.write(`${text}\n`));
/** Runs a command that opens what it needs itself (no migrations: backup, restore, doctor); an error exits as any start error. */
const act = (fn: () => Promise<void>) => fn().catch(fail);
addBackupCommands(
  program,
  () => loadConfig(),
  act,
  (text) => process.stdout.write(`${text}\n`),
);
addDoctorCommand(program, act, (text) => process.stdout.write(`${text}\n`));
addMemberCommands(program, run, (text) => process.stdout.write(`${text}\n`));
addMoneyCommands(program, run, (text) => process.stdout.write(`${text}\n`));
addModelsCommands(
  program,
  (text) => process.stdout.write(`${text}\n`),
  (text) => process.stderr.write(`${text}\n`),
  run,
);

/**
 * The client commands (run, tasks, upload, balance, login; docs/cli.md, decision 2200) belong to the
 * SDK package and talk HTTP only: they are handed over before any server setting is read, so they
 * work without a database or configuration. The sources run the package's sources, dist/ its build.
 */
const clientCli = new URL(import.meta.url.endsWith('.ts') ? '../packages/client/src/cli/main.ts' : '../packages/client/dist/cli/main.js', import.meta.url);
const client = (await import(clientCli.href)) as { CLIENT_COMMANDS: readonly string[]; USAGE: string; main: (argv: string[]) => Promise<number> };
if (client.CLIENT_COMMANDS.includes(process.argv[2] ?? '')) {
  process.exitCode = await client.main(process.argv.slice(2));
} else {
  // Everything GenGate creates (database, key file, files, temporary files) is readable by its owner only.
  process.umask(0o077);
  program.addHelpText('after', `\n${client.USAGE}`);
  program.parseAsync(process.argv).catch(fail);
}
