import { connect, type Socket } from 'node:net';

/** Opens a raw TCP connection to `url`, from `localAddress` when given (all of 127/8 is loopback on Linux). */
export function open(url: string, localAddress?: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until the connection closes (a reset ends it too). */
export function untilClosed(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (d) => (text += d));
  socket.on('error', () => {});
  return new Promise((resolve) => socket.once('close', () => resolve(text)));
}

/** Fails with `what` unless `promise` settles within `ms`: a generous bound, so a missing guard fails instead of hanging. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
