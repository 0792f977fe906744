import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

// Plain CommonJS run with `eval`, so it needs no TypeScript loader in the worker.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.modulePath);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 200');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: next time */ }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/**
 * Checkpoints the SQLite WAL from a worker thread. A checkpoint writes the WAL back into the
 * database file and syncs it; run from the main connection (SQLite's automatic checkpoint) that
 * sync stalls the event loop for milliseconds at a time under write load. A PASSIVE checkpoint
 * never blocks writers.
 */
export function startCheckpointer(file: string, everyMs = 500): { stop(): Promise<void> } {
  const worker = new Worker(WORKER, { eval: true, workerData: { file, everyMs, modulePath: require.resolve('better-sqlite3') } });
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
