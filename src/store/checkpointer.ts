import { Worker } from 'node:worker_threads';
import { betterSqlitePath, type SqliteDriverName } from './sqlite-driver.js';

// Plain CommonJS run with `eval`, so it needs no TypeScript loader in the worker. It opens the file
// with the library the main connection uses (sqlite-driver.ts); on Node 22 node:sqlite's
// experimental-feature warning is kept back here too.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
let db;
if (workerData.modulePath) {
  const Database = require(workerData.modulePath);
  db = new Database(workerData.file);
} else {
  const emit = process.emitWarning;
  process.emitWarning = (w, ...rest) => { if (!/SQLite is an experimental feature/.test(String(w))) emit.call(process, w, ...rest); };
  const { DatabaseSync } = require('node:sqlite');
  process.emitWarning = emit;
  db = new DatabaseSync(workerData.file);
}
db.exec('PRAGMA busy_timeout = 200');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try { checkpoint.all(); } catch { /* busy: next time */ }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/**
 * Checkpoints the SQLite WAL from a worker thread. A checkpoint writes the WAL back into the
 * database file and syncs it; run from the main connection (SQLite's automatic checkpoint) that
 * sync stalls the event loop for milliseconds at a time under write load. A PASSIVE checkpoint
 * never blocks writers.
 */
export function startCheckpointer(file: string, driver: SqliteDriverName, everyMs = 500): { stop(): Promise<void> } {
  const modulePath = driver === 'better-sqlite3' ? betterSqlitePath() : null;
  const worker = new Worker(WORKER, { eval: true, workerData: { file, everyMs, modulePath } });
  worker.unref();
  worker.on('error', () => {}); // the main connection's automatic checkpoint is the backstop
  return {
    // Ref'd while stopping: an unref'd worker alone would let the process exit with this promise unsettled.
    stop: () =>
      new Promise<void>((resolve) => {
        if (worker.threadId === -1) return resolve();
        worker.ref();
        const timer = setTimeout(() => void worker.terminate(), 2000);
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        worker.postMessage('stop');
      }),
  };
}
