import type { CallbacksTable } from '../store/index.js';
import type { TaskRow } from './view.js';
import { boundedCache } from '../cache.js';

/** Bytes of JSON text kept at most (about 5,000 typical tasks). */
const MAX_BYTES = 8 * 1024 * 1024;

/**
 * Until when the view of a task cannot change, by what can still change it: nothing for a
 * running task (0); for a finished one only the files expiring (success, at `files_expire_at`: the
 * sweep then sets filesExpired and updateTime) and a callback still being delivered (its status
 * object). A finished task whose files expired and whose callback is settled never changes again.
 */
export function unchangedUntil(row: TaskRow & { files_expire_at: number | null }, callback: CallbacksTable | null): number {
  if (row.state !== 'success' && row.state !== 'fail') return 0;
  if (row.callback_url && (!callback || callback.status === 'pending')) return 0;
  if (row.state === 'success' && Number(row.files_expired) !== 1) return row.files_expire_at === null ? 0 : Number(row.files_expire_at);
  return Infinity;
}

/**
 * The JSON text of finished tasks' views, by task id, while they cannot change (unchangedUntil):
 * a finished task read again (result pages, a client polling after the end, MCP waits) is answered
 * from memory, not the database. It holds only what no process can change any more, so it is
 * right in a fleet of processes too. Bounded by bytes; the least recently used entry goes first.
 */
export class FinalViews {
  private readonly entries;

  constructor(maxBytes = MAX_BYTES) {
    this.entries = boundedCache<string, { accountId: string; json: string; until: number }>(maxBytes, { sizeOf: (e) => e.json.length });
  }

  /** The kept view of the account's task, if it is still valid at `now`. */
  get(taskId: string, accountId: string, now: number): string | undefined {
    const e = this.entries.get(taskId);
    if (!e || e.accountId !== accountId) return undefined;
    if (now < e.until) return e.json;
    this.entries.delete(taskId);
    return undefined;
  }

  /** Keeps a view that holds until `until` (nothing when that is not after `now`, or when it alone is over the bound). */
  put(taskId: string, accountId: string, json: string, until: number, now: number): void {
    if (until <= now) return;
    this.entries.set(taskId, { accountId, json, until });
  }

  get size(): number {
    return this.entries.size;
  }
}
