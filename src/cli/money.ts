import type { Command } from 'commander';
import type { Core } from '../core.js';
import { Errors } from '../errors.js';
import {
  formatUsd,
  moneyReport,
  readWindow,
  reportCsv,
  reportView,
  REPORT_PERIODS,
  USAGE_GROUPS,
  usageCsv,
  usageOf,
  usageView,
  type ReportPeriod,
  type UsageGroup,
} from '../billing/index.js';

type Run = (fn: (s: Core) => Promise<void>) => Promise<void>;
type Out = (text: string) => void;

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw Errors.invalid(`${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  return value as T;
}

const usd = (micros: number) => formatUsd(micros, 6).padStart(14);

/** `gengate usage` and `gengate report`: spend of an account, and the money report (the admin API's figures). */
export function addMoneyCommands(program: Command, run: Run, out: Out) {
  program
    .command('usage')
    .description("an account's spend per UTC day, model or key, net of refunds (default: the last 30 days)")
    .requiredOption('--account <id>', 'account id')
    .option('--from <date>', 'start: a date (UTC) or an ISO 8601 time')
    .option('--to <date>', 'end: a date (its whole day counts) or an ISO 8601 time')
    .option('--by <group>', `${USAGE_GROUPS.join(', ')}`, 'day')
    .option('--json', 'print JSON')
    .option('--csv', 'print CSV')
    .action((o) =>
      run(async (s) => {
        const group = oneOf<UsageGroup>(o.by, USAGE_GROUPS, '--by');
        const account = await s.accounts.get(o.account);
        const window = readWindow({ from: o.from, to: o.to }, s.clock.now(), { defaultDays: 30, maxDays: 366 });
        const u = await usageOf(s.database.db, account.id, window, group);
        if (o.csv) return out(usageCsv(u).trimEnd());
        if (o.json) return out(JSON.stringify(usageView(u)));
        const label = (r: (typeof u.rows)[number]) => (group === 'day' ? r.day! : group === 'model' ? r.model! : `${r.keyId ?? '(no key)'} ${r.keyName ?? ''}`);
        const lines = u.rows.map(
          (r) =>
            `${label(r).padEnd(40)} ${usd(r.spentMicros)}  (charged ${formatUsd(r.chargedMicros, 6)}, refunded ${formatUsd(r.refundedMicros, 6)}, ${r.tasks} tasks)`,
        );
        lines.push(
          `${'total USD'.padEnd(40)} ${usd(u.total.spentMicros)}  (${u.total.tasks} tasks, ${new Date(u.from).toISOString()} to ${new Date(u.to).toISOString()})`,
        );
        out(lines.join('\n'));
      }),
    );

  program
    .command('report')
    .description('the money report: every movement of the balances per UTC day or month, and the reconciliation')
    .option('--from <date>', 'start: a date (UTC) or an ISO 8601 time')
    .option('--to <date>', 'end: a date (its whole day counts) or an ISO 8601 time')
    .option('--by <period>', `${REPORT_PERIODS.join(', ')}`, 'day')
    .option('--json', 'print JSON')
    .option('--csv', 'print CSV')
    .action((o) =>
      run(async (s) => {
        const by = oneOf<ReportPeriod>(o.by, REPORT_PERIODS, '--by');
        const window = readWindow({ from: o.from, to: o.to }, s.clock.now(), { defaultDays: 30, maxDays: by === 'day' ? 366 : 3660 });
        const r = await moneyReport(s.database.db, window, by);
        if (o.csv) return out(reportCsv(r).trimEnd());
        const v = reportView(r);
        if (o.json) return out(JSON.stringify(v));
        const t = v.total;
        out(
          [
            `money report ${v.from} to ${v.to} (USD; in +, out -)`,
            ...v.periods.map((p) => `${p.period.padEnd(10)} opening ${p.opening.padStart(14)}  net ${p.net.padStart(14)}  closing ${p.closing.padStart(14)}`),
            '',
            `opening balances   ${t.opening.padStart(14)}`,
            `operator top-ups   ${t.topups.operator.padStart(14)}`,
            `card top-ups       ${t.topups.card.padStart(14)}`,
            `charges            ${t.charges.padStart(14)}`,
            `refunds            ${t.refunds.full.padStart(14)}`,
            `partial refunds    ${t.refunds.partial.padStart(14)}`,
            `credits            ${t.adjustments.credits.padStart(14)}`,
            `debits             ${t.adjustments.debits.padStart(14)}`,
            `Stripe refunds     ${t.stripe.refunds.padStart(14)}`,
            `Stripe disputes    ${t.stripe.disputes.padStart(14)}`,
            `disputes won       ${t.stripe.disputesWon.padStart(14)}`,
            `closing balances   ${t.closing.padStart(14)}`,
            `balances at end    ${v.reconciliation.balancesAtEnd.padStart(14)}  ${v.reconciliation.reconciled ? 'reconciled' : 'NOT RECONCILED'}`,
            `unpaid remainders  ${t.stripe.unpaid.padStart(14)}  (not covered by balances)`,
            `Stripe fees        ${t.stripe.fees.padStart(14)}  (${t.stripe.feesPending === 0 ? 'all known' : `${t.stripe.feesPending} not known yet`}; not a movement of the balances)`,
            `card net of fees   ${t.stripe.net.padStart(14)}  (card top-ups paid less the known fees: what Stripe pays out)`,
          ].join('\n'),
        );
      }),
    );
}
