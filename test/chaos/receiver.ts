import http from 'node:http';
import type { Delivery } from './checks.js';

/** A seeded random source (mulberry32), so a chaos run can be repeated. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A callback receiver that misbehaves the way real ones do: on the first two attempts at a task
 * it answers 500, answers slower than GenGate waits (`slowMs`), answers slowly but in time, or
 * answers at once; from the third attempt on it always answers 200, so every callback can be
 * delivered within the retries. It records every request's task id and webhook-id.
 */
export async function startChaosReceiver(random: () => number, slowMs: number, port = 0) {
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const taskId = /"taskId":"([^"]+)"/.exec(body)?.[1] ?? '?';
      deliveries.push({ taskId, webhookId: String(req.headers['webhook-id']) });
      const n = (attempts.get(taskId) ?? 0) + 1;
      attempts.set(taskId, n);
      const roll = n >= 3 ? 1 : random();
      const answer = () => {
        if (!res.destroyed) res.writeHead(roll < 0.25 ? 500 : 200, { 'content-type': 'text/plain' }).end('ok');
      };
      if (roll < 0.25) answer();
      else if (roll < 0.4) setTimeout(answer, slowMs);
      else if (roll < 0.5) setTimeout(answer, Math.floor(slowMs / 4));
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
