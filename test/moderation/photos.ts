import net from 'node:net';

/**
 * A photo host that never finishes a TLS handshake: createTask takes only https photo links, and
 * this lets a test see whether the content check tried to fetch (it counts connections) and, with
 * `hold`, keep a check busy until the test releases it (the fetch then fails).
 */
export async function startPhotoSink(hold: boolean) {
  const sockets: net.Socket[] = [];
  let onConnection: (() => void) | null = null;
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    if (!hold) return void socket.destroy();
    sockets.push(socket);
    onConnection?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    connections: () => connections,
    /** Resolves once a connection is being held (at once if one is). */
    held: () =>
      new Promise<void>((resolve) => {
        if (sockets.length > 0) return resolve();
        onConnection = resolve;
      }),
    /** Drops the held connections: their fetches fail. */
    release: () => sockets.splice(0).forEach((s) => s.destroy()),
    close: () =>
      new Promise<void>((resolve) => {
        sockets.splice(0).forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
