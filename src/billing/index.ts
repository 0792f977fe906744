export { Ledger, type ChargeResult, type RefundResult, type LedgerEntry } from './ledger.js';
export { parseUsd, parseSignedUsd, formatUsd, toRub, usdNumber, MICROS_PER_USD } from './money.js';
export { entryView, entriesCsv } from './export.js';
export { periodStart } from './periods.js';
export { usageOf, usageQuery, usageView, usageCsv, USAGE_GROUPS, type Usage, type UsageGroup, type UsageRow } from './usage.js';
export { moneyReport, reportView, reportCsv, REPORT_PERIODS, type MoneyReport, type ReportPeriod } from './report.js';
export { readWindow, DAY_MS, type Window } from './window.js';
export { AlertSettings, BALANCE_LOW, type AlertView, type AlertChange } from './alerts.js';
