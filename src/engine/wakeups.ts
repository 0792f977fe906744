import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { sql } from 'kysely';
import type { Database } from '../store/index.js';
import type { TaskSignals } from '../tasks/index.js';

/** How task signals reach other processes: Redis pub/sub, PostgreSQL LISTEN/NOTIFY, or not at all (one process). */
export type WakeupKind = 'redis' | 'postgres' | 'local';

/** A bridge carrying the task signals between processes; polling (ENGINE_POLL_MS) stays the fallback. */
export interface Wakeups {
  kind: WakeupKind;
  close(): Promise<void>;
}

const CHANNEL = 'gengate_wake';
const EVENTS = ['created', 'due', 'finished', 'callbackDue'] as const;
/** Wait before a lost LISTEN connection is opened again; polling covers the gap. */
const RECONNECT_MS = 1_000;

/** Signals per message: PostgreSQL's NOTIFY takes at most 8,000 bytes, a line is under 60. */
const LINES_PER_MESSAGE = 100;

/**
 * Relays local signals out and remote ones in. A message is one or more lines `<origin> <event>
 * <taskId>`: the signals of one turn of the event loop go out together (one NOTIFY or PUBLISH per
 * hundred, not one each: at 10,000 tasks in flight a worker sends hundreds a second). A process
 * ignores its own messages, and re-emits remote ones locally without sending them out again.
 */
class Relay {
  private readonly origin = randomBytes(6).toString('hex');
  private relaying = false;
  private pending: string[] = [];
  private readonly listeners = EVENTS.map((event) => [event, (id: string) => this.out(event, id)] as const);

  constructor(
    private readonly signals: TaskSignals,
    private readonly send: (message: string) => void,
  ) {
    for (const [event, fn] of this.listeners) signals.on(event, fn);
  }

  private out(event: string, id: string): void {
    if (this.relaying) return;
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push(`${this.origin} ${event} ${id}`);
  }

  private flush(): void {
    const lines = this.pending;
    this.pending = [];
    for (let i = 0; i < lines.length; i += LINES_PER_MESSAGE) this.send(lines.slice(i, i + LINES_PER_MESSAGE).join('\n'));
  }

  /** Handles one message from the channel. */
  in(message: string): void {
    for (const line of message.split('\n')) {
      const [origin, event, id] = line.split(' ');
      if (origin === this.origin || !event || !id || !(EVENTS as readonly string[]).includes(event)) continue;
      this.relaying = true;
      try {
        this.signals.emit(event as (typeof EVENTS)[number], id);
      } finally {
        this.relaying = false;
      }
    }
  }

  /** Stops relaying; what is pending still goes out. */
  detach(): void {
    for (const [event, fn] of this.listeners) this.signals.off(event, fn);
    this.flush();
  }
}

/** Redis pub/sub: publishes on the shared connection, listens on a dedicated one (a subscribed connection can do nothing else). */
async function redisWakeups(signals: TaskSignals, redis: Redis): Promise<Wakeups> {
  const sub = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  sub.on('error', () => {});
  const relay = new Relay(signals, (m) => void redis.publish(CHANNEL, m).catch(() => {}));
  sub.on('message', (_channel: string, m: string) => relay.in(m));
  // Not awaited: with Redis down the start must not wait; the offline queue subscribes once it is up,
  // and ioredis subscribes again by itself after a reconnect.
  void sub.subscribe(CHANNEL).catch(() => {});
  return {
    kind: 'redis',
    close: async () => {
      relay.detach();
      sub.disconnect();
    },
  };
}

/** PostgreSQL LISTEN on one dedicated connection, opened again when it drops; NOTIFY through the pool (many at once). */
async function postgresWakeups(signals: TaskSignals, url: string, database: Database): Promise<Wakeups> {
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const relay = new Relay(signals, (m) => void sql`select pg_notify(${CHANNEL}, ${m})`.execute(database.db).catch(() => {}));
  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {});
    c.on('notification', (n) => n.payload && relay.in(n.payload));
    c.on('end', () => {
      if (client === c) client = null;
      if (!closed) timer = setTimeout(() => void connect(), RECONNECT_MS);
    });
    try {
      await c.connect();
      await c.query(`listen ${CHANNEL}`);
      if (closed) return void (await c.end().catch(() => {}));
      client = c;
    } catch {
      await c.end().catch(() => {});
    }
  };
  await connect();
  return {
    kind: 'postgres',
    close: async () => {
      closed = true;
      clearTimeout(timer);
      relay.detach();
      await client?.end().catch(() => {});
    },
  };
}

/** Picks the bridge: Redis when configured, else PostgreSQL, else none (in-process signals only, e.g. SQLite). */
export async function connectWakeups(signals: TaskSignals, opts: { redis: Redis | null; databaseUrl: string; database: Database }): Promise<Wakeups> {
  if (opts.redis) return redisWakeups(signals, opts.redis);
  if (opts.database.dialect === 'postgres') return postgresWakeups(signals, opts.databaseUrl, opts.database);
  return { kind: 'local', close: async () => {} };
}
