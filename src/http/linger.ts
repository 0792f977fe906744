import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends (decision 2402). */
export const LINGER_MS = 2_000;
/** How much of it at most, before the connection is cut. */
export const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Answer, then close (decision 2402). When the server ends a connection after its answer (the
 * answer says `connection: close`: a refusal before the body was read, an upload cut off), Node
 * ends the socket and destroys it as soon as the answer is written. A client still sending its
 * body then meets a closed socket, and the kernel answers its next bytes with a reset, which can
 * take the unread answer with it: Node's fetch reports `EPIPE` in place of the 401, 413 or 422.
 * Here the socket is half-closed instead (the answer, then FIN) and whatever the client still
 * sends is read and dropped, until the client closes its side, for at most `ms` and `bytes`;
 * only then is it destroyed. So the client reads the answer while it writes (curl stops sending
 * when it sees it), and a client that goes on sending a large body is still cut off early.
 */
export function lingerOnClose(server: Server, limits: { ms: number; bytes: number } = { ms: LINGER_MS, bytes: LINGER_BYTES }): void {
  server.on('connection', (socket: Socket) => {
    // Node's server calls destroySoon when a response that ends the connection has finished (and
    // falls back to end() where a socket has none): the one place that decides how it closes.
    socket.destroySoon = function lingeringClose(this: Socket): void {
      if (this.destroyed) return;
      const start = this.bytesRead;
      const cut = () => this.destroy();
      const timer = setTimeout(cut, limits.ms);
      timer.unref();
      this.once('close', () => clearTimeout(timer));
      this.once('end', cut); // the client closed its side: nothing more will come
      this.on('data', () => {
        if (this.bytesRead - start > limits.bytes) cut();
      });
      this.end();
      // The request's own readers may have stopped (a refused upload's parser): read on regardless.
      this.resume();
    };
  });
}
