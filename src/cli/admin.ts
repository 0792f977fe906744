import type { Command } from 'commander';
import type { Core } from '../core.js';
import { Errors } from '../errors.js';
import { entriesCsv, entryView, parseSignedUsd, parseUsd, type AlertChange } from '../billing/index.js';
import { BUDGET_PERIODS, parseIsoTime, type AccountView, type KeyView } from '../accounts/index.js';
import type { KeyBudgetPeriod } from '../store/index.js';
import type { ModelSwitchView } from '../catalog/index.js';

type Run = (fn: (s: Core) => Promise<void>) => Promise<void>;
type Out = (text: string) => void;

function usd(value: string, flag: string): number {
  const micros = parseUsd(value);
  if (micros === null) throw Errors.invalid(`${flag} must be a USD amount such as 10 or 2.50 (got ${JSON.stringify(value)})`);
  return micros;
}

/** --expires: an ISO 8601 time, or "never" (only on update: removes the expiry). */
function expiryValue(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'never') return null;
  const at = parseIsoTime(value);
  if (at === null)
    throw Errors.invalid(`--expires must be an ISO 8601 time with its zone such as 2026-12-31T23:59:59Z, a date, or never (got ${JSON.stringify(value)})`);
  return at;
}

function periodValue(value: string | undefined): KeyBudgetPeriod | undefined {
  if (value === undefined) return undefined;
  if (!(BUDGET_PERIODS as readonly string[]).includes(value)) {
    throw Errors.invalid(`--budget-period must be one of ${BUDGET_PERIODS.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as KeyBudgetPeriod;
}

function limitValue(value: string | undefined, flag: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (!/^\d+$/.test(value)) throw Errors.invalid(`${flag} must be a whole number of requests or "default" (got ${JSON.stringify(value)})`);
  return Number(value);
}

/** The options of `account alert` as a change (only those given). */
function alertChange(o: { level?: string; url?: string; email?: string }): AlertChange {
  const change: AlertChange = {};
  if (o.level !== undefined) {
    if (o.level === 'off') change.level = null;
    else if ((parseUsd(o.level) ?? 0) > 0) change.level = o.level;
    else throw Errors.invalid(`--level must be a positive USD amount such as 5 or 2.50, or off (got ${JSON.stringify(o.level)})`);
  }
  if (o.url !== undefined) change.url = o.url === 'none' ? null : o.url;
  if (o.email !== undefined) {
    if (o.email !== 'on' && o.email !== 'off') throw Errors.invalid(`--email must be on or off (got ${JSON.stringify(o.email)})`);
    change.email = o.email === 'on';
  }
  return change;
}

const list = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
const accountLine = (a: AccountView) =>
  `${a.id}  ${a.status.padEnd(8)}  ${a.balance.padStart(12)} USD  ${a.name}${a.dialect === 'gengate' ? '' : `  (dialect ${a.dialect})`}`;
const budgetText = (k: KeyView) =>
  k.budget
    ? `budget=${k.budget.amount}/${k.budget.period}${k.spent === undefined ? '' : ` spent=${k.spent} remaining=${k.remaining}`}`
    : `budget=none${k.spent === undefined ? '' : ` spent=${k.spent}`}`;
const keyLine = (k: KeyView) =>
  `${k.id}  ${JSON.stringify(k.name)}  ${k.prefix}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}  expires ${k.expiresAt ?? 'never'}  ${budgetText(k)}  ` +
  `scopes=${k.scopes?.join(',') ?? 'all'}  models=${k.models?.join(',') ?? 'all'}  last used ${k.lastUsedAt ?? 'never'}`;

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
    .command('adjust <id>')
    .description('credit (+) or debit (-) the account with a reason; a debit never takes the balance below zero')
    .requiredOption('--amount <usd>', 'signed amount in USD, e.g. +1.5 or -2')
    .requiredOption('--reason <text>', 'why: shown in the ledger')
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run(async (s) => {
        const micros = parseSignedUsd(o.amount);
        if (micros === null || micros === 0) {
          throw Errors.invalid(
            `--amount must be a non-zero USD amount, positive to credit and negative to debit, such as +1.5 or -2 (got ${JSON.stringify(o.amount)})`,
          );
        }
        const a = await s.accounts.adjust(id, micros, o.reason);
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

  account
    .command('alert <id>')
    .description('show or set the low-balance alert: one signed balance.low webhook (and email to the owners) when the balance falls below the level')
    .option('--level <usd>', 'the level in USD, or off (no alert)')
    .option('--url <url>', 'where the webhook goes, or none')
    .option('--email <on|off>', "email the account's owners too (needs SMTP_URL)")
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run(async (s) => {
        const change = alertChange(o);
        const a = Object.keys(change).length === 0 ? await s.alerts.get(id) : await s.alerts.set(id, change);
        print(
          o.json,
          { alert: a },
          `${id}  alert level=${a.level ?? 'off'}  url=${a.url ?? 'none'}  email=${a.email ? 'on' : 'off'}  ${a.armed ? 'armed' : 'not armed'}`,
        );
      }),
    );

  account
    .command('rotate-secret <id>')
    .description('make a new webhook secret; the old one keeps signing (second signature) for 24 hours')
    .option('--json', 'print JSON')
    .action((id: string, o) =>
      run(async (s) => {
        const r = await s.accounts.rotateWebhookSecret(id);
        print(o.json, r, `${id}  webhook secret ${r.secret}${r.previous ? `\nprevious (signs until ${r.previous.validUntil}) ${r.previous.secret}` : ''}`);
      }),
    );

  account
    .command('dialect <id> <dialect>')
    .description("set the account's dialect: kie (resultJson always a JSON string, for kie.ai clients) or gengate; tasks created from now on")
    .option('--json', 'print JSON')
    .action((id: string, dialect: string, o) =>
      run(async (s) => {
        const a = await s.accounts.setDialect(id, dialect);
        print(o.json, { account: a }, `${accountLine(a)}${a.dialect === 'gengate' ? '  (dialect gengate)' : ''}`);
      }),
    );

  const key = program.command('key').description('manage API keys');
  key
    .command('create')
    .requiredOption('--account <id>', 'account id')
    .option('--name <name>', 'a name people recognise (default: "key N")')
    .option('--scopes <list>', 'comma-separated: tasks:write,tasks:read,files:write,balance:read,billing,keys:read,keys:write')
    .option('--models <list>', 'comma-separated model allowlist')
    .option('--expires <time>', 'ISO 8601 time after which the key answers 401')
    .option('--budget <usd>', 'spend limit in USD per --budget-period')
    .option('--budget-period <period>', 'total, day or month (days and months in UTC)', 'total')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const expiresAt = expiryValue(o.expires);
        const budget = o.budget === undefined ? null : { micros: usd(o.budget, '--budget'), period: periodValue(o.budgetPeriod)! };
        const r = await s.accounts.createKey(o.account, { name: o.name, scopes: list(o.scopes), models: list(o.models), expiresAt, budget });
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
    .command('update <keyId>')
    .description("change a key's name, expiry or budget")
    .option('--name <name>', 'new name')
    .option('--expires <time>', 'ISO 8601 time, or never to remove the expiry')
    .option('--budget <usd>', 'spend limit in USD, or none to remove the budget')
    .option('--budget-period <period>', 'total, day or month (days and months in UTC)')
    .option('--json', 'print JSON')
    .action((keyId: string, o) =>
      run(async (s) => {
        const period = periodValue(o.budgetPeriod);
        let budget: { micros?: number; period?: KeyBudgetPeriod } | null | undefined;
        if (o.budget === 'none') budget = null;
        else if (o.budget !== undefined || period !== undefined) budget = { micros: o.budget === undefined ? undefined : usd(o.budget, '--budget'), period };
        const k = await s.accounts.updateKey(keyId, { name: o.name, expiresAt: expiryValue(o.expires), budget });
        print(o.json, { key: k }, keyLine(k));
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
