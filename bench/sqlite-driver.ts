// The SQLite drivers side by side (decision 2400): node:sqlite, which the store uses where the
// runtime has it, against better-sqlite3, which it uses elsewhere, through the store's own seam
// (src/store/sqlite-driver.ts) on a WAL file with the writer's settings.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultDriver, openConnection, WRITER_PRAGMAS, type Connection, type SqliteDriverName } from '../src/store/index.js';
import type { Statement } from '../src/store/sqlite-driver.js';

/** node:sqlite may cost at most this many times better-sqlite3 on each operation (when both load in this runtime). */
export const MAX_DRIVER_RATIO = 1.5;

export interface DriverFigures {
  driver: SqliteDriverName;
  /** Median microseconds per operation, by operation. */
  us: Record<string, number>;
}

export interface SqliteDriverBench {
  node: string;
  /** The driver the store uses on this runtime. */
  used: SqliteDriverName;
  figures: DriverFigures[];
  /** What went wrong with a driver: not loaded, or an abort (with or without its figure). */
  missing: Array<{ driver: SqliteDriverName; why: string }>;
  /** node:sqlite ÷ better-sqlite3 per operation, when both were measured. */
  ratios: Record<string, number> | null;
  pass: boolean;
}

const COLUMNS = Array.from({ length: 24 }, (_, i) => `c${i}`);
const ROWS = 10_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Microseconds per call of `op`, the median of `rounds` rounds of `n` calls. */
function time(n: number, rounds: number, op: (i: number) => void): number {
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) op(r * n + i);
    perRound.push(Number(process.hrtime.bigint() - start) / 1000 / n);
  }
  return Math.round(median(perRound) * 100) / 100;
}

/** The operations measured, each in a process of its own (a driver that aborts loses only that operation's figure). */
const OPERATIONS = ['write transaction', 'point read, 2 columns', 'point read, 26 columns', 'prepare and read', 'count over 10,000 rows'] as const;
type Operation = (typeof OPERATIONS)[number];

/**
 * Fills a table of 10,000 rows of 26 columns and measures `op` on it. Every statement stays
 * referenced until the figure is out: better-sqlite3 12 on Node 24 aborts the process when a
 * collection finalizes a statement (decision 2400), and the figure is wanted first.
 */
function measure(db: Connection, op: Operation, kept: unknown[]): number {
  const conn = { exec: (text: string) => db.exec(text), prepare: (text: string) => (kept.push(db.prepare(text)), kept.at(-1) as Statement) };
  conn.exec(`create table t (id integer primary key, ${COLUMNS.map((c) => `${c} text`).join(', ')}, n integer not null)`);
  conn.exec('create table w (id integer primary key, account text not null, amount integer not null)');
  const insert = conn.prepare(`insert into t (id, ${COLUMNS.join(', ')}, n) values (?, ${COLUMNS.map(() => '?').join(', ')}, ?)`);
  const values = COLUMNS.map((c) => `${c} value`);
  conn.prepare('BEGIN').run();
  for (let i = 0; i < ROWS; i++) insert.run([i, ...values, i]);
  conn.prepare('COMMIT').run();
  if (op === 'write transaction') {
    // As the store runs one: BEGIN IMMEDIATE, an insert and an update, COMMIT (WAL, synchronous NORMAL).
    const [begin, commit] = [conn.prepare('BEGIN IMMEDIATE'), conn.prepare('COMMIT')];
    const write = conn.prepare('insert into w (account, amount) values (?, ?)');
    const bump = conn.prepare('update t set n = n + ? where id = ?');
    return time(2_000, 5, (i) => {
      begin.run();
      write.run([`acc_${i % 100}`, i]);
      bump.run([1, i % ROWS]);
      commit.run();
    });
  }
  if (op === 'point read, 2 columns') {
    const narrow = conn.prepare('select id, n from t where id = ?');
    return time(20_000, 5, (i) => void narrow.all([i % ROWS]));
  }
  if (op === 'point read, 26 columns') {
    const wide = conn.prepare('select * from t where id = ?');
    return time(20_000, 5, (i) => void wide.all([i % ROWS]));
  }
  // Statements that become garbage: where better-sqlite3 aborts on Node 24 (its statement's destructor, run by a collection).
  if (op === 'prepare and read') return time(5_000, 5, (i) => void conn.prepare('select id, n from t where id = ?').all([i % ROWS]));
  const count = conn.prepare('select count(*) as n from t where n >= ?');
  return time(200, 5, () => void count.value([0]));
}

/** In a child process: measures one operation on one driver and prints its figure as JSON. */
function child(driver: SqliteDriverName, op: Operation): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-bench-sqlite-'));
  try {
    const conn = openConnection(path.join(dir, 'bench.db'), { driver, nativeBinding: process.env.BENCH_BETTER_SQLITE3_BINDING });
    conn.exec('PRAGMA journal_mode = WAL');
    conn.exec(WRITER_PRAGMAS);
    const kept: unknown[] = [];
    const us = measure(conn, op, kept);
    writeSync(1, `${JSON.stringify({ us })}\n`); // at once: a driver may abort the process at exit
    conn.close();
    kept.length = 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--sqlite-driver-child') child(process.argv[3] as SqliteDriverName, process.argv[4] as Operation);

/**
 * Measures each driver that loads in this runtime (better-sqlite3 from BENCH_BETTER_SQLITE3_BINDING
 * when given: a module built for this runtime), each operation in a process of its own.
 */
export async function benchSqliteDrivers(): Promise<SqliteDriverBench> {
  const figures: DriverFigures[] = [];
  const missing: SqliteDriverBench['missing'] = [];
  for (const driver of ['node:sqlite', 'better-sqlite3'] as const) {
    const us: Record<string, number> = {};
    for (const op of OPERATIONS) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--sqlite-driver-child', driver, op], { encoding: 'utf8' });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (line.startsWith('{')) us[op] = (JSON.parse(line) as { us: number }).us;
      if (r.status === 0) continue;
      // A figure and then an abort at exit is both: the figure counts, the abort is said.
      const why = /Assertion failed[^\n]*/.exec(r.stderr)?.[0] ?? /\bError: [^\n]*/.exec(r.stderr)?.[0] ?? 'no figure';
      missing.push({ driver, why: `${op}: ${op in us ? 'measured, then ' : ''}exit ${r.status ?? r.signal}, ${why.trim().slice(0, 160)}` });
      if (Object.keys(us).length === 0 && !/Assertion failed/.test(why)) break; // the driver does not load here
    }
    if (Object.keys(us).length > 0) figures.push({ driver, us });
  }
  const [n, b] = [figures.find((f) => f.driver === 'node:sqlite'), figures.find((f) => f.driver === 'better-sqlite3')];
  const ratios =
    n && b
      ? Object.fromEntries(
          Object.keys(n.us)
            .filter((op) => op in b.us)
            .map((op) => [op, Math.round((n.us[op]! / b.us[op]!) * 100) / 100]),
        )
      : null;
  return {
    node: process.version,
    used: defaultDriver(),
    figures,
    missing,
    ratios,
    pass: ratios === null || Object.values(ratios).every((r) => r <= MAX_DRIVER_RATIO),
  };
}

export function printSqliteDrivers(r: SqliteDriverBench): void {
  console.log(`\nSQLite drivers on node ${r.node} (the store uses ${r.used}), median µs per operation:`);
  const ops = OPERATIONS.filter((op) => r.figures.some((f) => op in f.us));
  console.log(`  ${'operation'.padEnd(26)}${r.figures.map((f) => f.driver.padStart(16)).join('')}${r.ratios ? 'ratio'.padStart(8) : ''}`);
  for (const op of ops) {
    console.log(
      `  ${op.padEnd(26)}${r.figures.map((f) => String(f.us[op] ?? '-').padStart(16)).join('')}${r.ratios ? String(r.ratios[op] ?? '-').padStart(8) : ''}`,
    );
  }
  for (const m of r.missing) console.log(`  ${m.driver}: ${m.why}`);
  console.log(
    r.ratios
      ? `  node:sqlite ÷ better-sqlite3 at most ${MAX_DRIVER_RATIO} on each operation ${r.pass ? 'PASS' : 'FAIL'}`
      : '  one driver only in this runtime: for information (BENCH_BETTER_SQLITE3_BINDING names a better-sqlite3 module built for it)',
  );
}
