import type { Command } from 'commander';
import type { Core } from '../core.js';
import { Errors } from '../errors.js';
import { entriesCsv, entryView, parseUsd } from '../billing/index.js';
import type { AccountView, KeyView } from '../accounts/index.js';
import type { ModelSwitchView } from '../catalog/index.js';

type Run = (fn: (s: Core) => Promise<void>) => Promise<void>;
type Out = (text: string) => void;

function usd(value: string, flag: string): number {
  const micros = parseUsd(value);
  if (micros === null) throw Errors.invalid(`${flag} must be a USD amount such as 10 or 2.50 (got ${JSON.stringify(value)})`);
  return micros;
}

function limitValue(value: string | undefined, flag: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (!/^\d+$/.test(value)) throw Errors.invalid(`${flag} must be a whole number of requests or "default" (got ${JSON.stringify(value)})`);
  return Number(value);
}

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
const accountLine = (a: AccountView) => `${a.id}  ${a.status.padEnd(8)}  ${a.balance.padStart(12)} USD  ${a.name}`;
const keyLine = (k: KeyView) =>
  `${k.id}  ${k.prefix}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}  scopes=${k.scopes?.join(',') ?? 'all'}  models=${k.models?.join(',') ?? 'all'}  last used ${k.lastUsedAt ?? 'never'}`;

/** The operator commands: account, key, ledger. Each prints one JSON object with --json. */
export function addAdminCommands(program: Command, run: Run, out: Out) {
  const print = (json: boolean, obj: object, human: string) => out(json ? JSON.stringify(obj) : human);

  const account = program.command('account').description('manage accounts');
  account
    .command('create')
    .requiredOption('--name <name>', 'account name')
    .option('--balance <usd>', 'opening balance in USD', '0')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const r = await s.accounts.create(o.name, usd(o.balance, '--balance'));
        print(o.json, { account: r.account, apiKey: r.apiKey }, `${accountLine(r.account)}\nAPI key (shown once): ${r.apiKey}`);
      }),
    );
  account
    .command('list')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const all = await s.accounts.list();
        print(o.json, { accounts: all }, all.map(accountLine).join('\n') || '(no accounts)');
      }),
    );
  for (const [name, fn] of [
    ['show', (s: Core, id: string) => s.accounts.get(id)],
    ['disable', (s: Core, id: string) => s.accounts.setStatus(id, 'disabled')],
    ['enable', (s: Core, id: string) => s.accounts.setStatus(id, 'active')],
  ] as const) {
    account
      .command(`${name} <id>`)
      .option('--json', 'print JSON')
      .action((id: string, o) =>
        run(async (s) => {
          const a = await fn(s, id);
          print(o.json, { account: a }, accountLine(a));
        }),
      );
  }
  account
    .command('topup <id>')
    .requiredOption('--amount <usd>', 'amount in USD')
    .option('--note <text>', 'reason shown in the ledger', '')
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run(async (s) => {
        const a = await s.accounts.topup(id, usd(o.amount, '--amount'), o.note);
        print(o.json, { account: a }, accountLine(a));
      }),
    );

  account
    .command('limits <id>')
    .description("set the per-key rate limits of the account's keys ('default' restores the setting)")
    .option('--write <n>', 'createTask + upload requests per window')
    .option('--read <n>', 'recordInfo + list + balance requests per window')
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run(async (s) => {
        const a = await s.accounts.setLimits(id, { write: limitValue(o.write, '--write'), read: limitValue(o.read, '--read') });
        print(o.json, { account: a }, `${accountLine(a)}  limits write=${a.limits.write ?? 'default'} read=${a.limits.read ?? 'default'}`);
      }),
    );

  const key = program.command('key').description('manage API keys');
  key
    .command('create')
    .requiredOption('--account <id>', 'account id')
    .option('--scopes <list>', 'comma-separated: tasks:write,tasks:read,files:write,balance:read,billing')
    .option('--models <list>', 'comma-separated model allowlist')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const r = await s.accounts.createKey(o.account, { scopes: list(o.scopes), models: list(o.models) });
        print(o.json, { key: r.key, apiKey: r.apiKey }, `${keyLine(r.key)}\nAPI key (shown once): ${r.apiKey}`);
      }),
    );
  key
    .command('list')
    .requiredOption('--account <id>', 'account id')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const keys = await s.accounts.listKeys(o.account);
        print(o.json, { keys }, keys.map(keyLine).join('\n') || '(no keys)');
      }),
    );
  key
    .command('revoke <keyId>')
    .option('--json', 'print JSON')
    .action((keyId: string, o) =>
      run(async (s) => {
        const k = await s.accounts.revokeKey(keyId);
        print(o.json, { key: k }, keyLine(k));
      }),
    );

  program
    .command('ledger')
    .description("print an account's ledger")
    .requiredOption('--account <id>', 'account id')
    .option('--json', 'print JSON')
    .option('--csv', 'print CSV')
    .action((o) =>
      run(async (s) => {
        const entries = await s.accounts.ledgerEntries(o.account);
        if (o.csv) return out(entriesCsv(entries).trimEnd());
        const views = entries.map(entryView);
        print(
          o.json,
          { entries: views },
          views
            .map(
              (e) => `${e.id}  ${e.createdAt}  ${e.kind.padEnd(14)} ${e.amount.padStart(14)}  ${e.balanceAfter.padStart(14)}  ${e.taskId ?? ''}  ${e.reason}`,
            )
            .join('\n') || '(no entries)',
        );
      }),
    );

  const modelLine = (m: ModelSwitchView) =>
    `${m.id.padEnd(32)} ${m.enabled ? 'enabled ' : 'disabled'}${m.switchedAt === null ? '' : `  (switched ${new Date(m.switchedAt).toISOString()}; catalog: ${m.catalogEnabled ? 'enabled' : 'disabled'})`}`;
  const model = program.command('model').description('list models, switch them on and off for every process');
  model
    .command('list')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const all = await s.models.list();
        print(o.json, { models: all }, all.map(modelLine).join('\n'));
      }),
    );
  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    model
      .command(`${name} <id>`)
      .option('--json', 'print JSON')
      .action((modelId: string, o) =>
        run(async (s) => {
          const m = await s.models.set(modelId, enabled);
          print(o.json, { model: m }, modelLine(m));
        }),
      );
  }
}
