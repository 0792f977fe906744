/** How long a finished record is kept for the results call that follows its progress call. */
const KEEP_MS = 60_000;
/** Records kept at most (the oldest goes first). */
const MAX_KEPT = 2_000;

/**
 * The record a progress call found finished, kept briefly for the engine's results call that
 * follows it at once: one upstream status read fewer per finished task. A record older than a
 * minute (or never kept: another process, a restart) is read again by the caller.
 */
export class DoneRecords<T> {
  private readonly kept = new Map<string, { value: T; at: number }>();

  keep(ref: string, value: T): void {
    this.kept.delete(ref);
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(ref, { value, at: Date.now() });
  }

  /** The record kept for `ref` (once), or undefined. */
  take(ref: string): T | undefined {
    const entry = this.kept.get(ref);
    if (!entry) return undefined;
    this.kept.delete(ref);
    return Date.now() - entry.at <= KEEP_MS ? entry.value : undefined;
  }
}
