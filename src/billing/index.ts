export { Ledger, type ChargeResult, type RefundResult, type LedgerEntry } from './ledger.js';
export { parseUsd, parseSignedUsd, formatUsd, toRub, usdNumber, MICROS_PER_USD } from './money.js';
export { entryView, entriesCsv } from './export.js';
export { periodStart } from './periods.js';
export { AlertSettings, BALANCE_LOW, type AlertView, type AlertChange } from './alerts.js';
