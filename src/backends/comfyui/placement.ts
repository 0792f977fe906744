import type { Queue } from './server.js';

/**
 * Jobs this process is placing or placed on each server of a route (url → prompt id → when `/prompt`
 * answered, null while in flight) that a probe may not list yet: hand-offs in flight (issue 36,
 * decision 2504). Placement adds them to the server's queue length, so simultaneous submits spread
 * over idle servers. An entry goes when a probe lists the job, or when a probe begun after the job
 * was queued does not (it ended already).
 */
export class Placements {
  private readonly byServer = new Map<string, Map<string, number | null>>();

  /** The entries of the server at `url`. */
  on(url: string): Map<string, number | null> {
    let map = this.byServer.get(url);
    if (!map) this.byServer.set(url, (map = new Map()));
    return map;
  }

  /** A probed server's load: its queue, plus the jobs placed there that the probe (begun at `at`) did not list yet. */
  load(p: { server: { url: string }; at: number; queue: Queue }): number {
    const placing = this.on(p.server.url);
    for (const [id, queuedAt] of placing) {
      if (p.queue.running.includes(id) || p.queue.pending.includes(id) || (queuedAt !== null && queuedAt < p.at)) placing.delete(id);
    }
    return p.queue.running.length + p.queue.pending.length + placing.size;
  }
}
