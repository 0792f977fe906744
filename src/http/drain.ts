import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { CutReason } from '../metrics/index.js';

/** How often idle connections are looked for while draining: a keep-alive connection whose answer just finished. */
const IDLE_SWEEP_MS = 50;

/**
 * A close that cannot be held open (decision 0315). `app.close()` stops accepting at once and
 * Node closes the idle keep-alive connections; then in-flight requests may finish for up to
 * `graceMs`, each connection closed as soon as its answer is done (Node itself would keep a
 * connection that turns idle during the close open until its keep-alive timeout); what is still
 * open after the grace period (a stalled download, a long poll, a client that never reads) is
 * destroyed, so the close returns within the grace period.
 */
export function drainOnClose(app: FastifyInstance, graceMs: number, cut: (reason: CutReason, count?: number) => void): void {
  app.addHook('preClose', (done) => {
    const server: Server = app.server;
    if (!server.listening) return done();
    const sweep = setInterval(() => server.closeIdleConnections(), Math.min(IDLE_SWEEP_MS, Math.max(1, graceMs)));
    const deadline = setTimeout(() => {
      clearInterval(sweep);
      server.getConnections((err, count) => {
        if (!err && count > 0) {
          app.log.info({ connections: count, graceMs }, 'connections still open after the shutdown grace period are closed');
          cut('shutdown_grace', count);
        }
        server.closeAllConnections();
      });
    }, graceMs);
    // Open connections keep the process alive anyway; the timers alone must not.
    sweep.unref();
    deadline.unref();
    server.once('close', () => {
      clearInterval(sweep);
      clearTimeout(deadline);
    });
    done();
  });
}
