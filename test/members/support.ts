import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestServer } from '../helpers/server.js';

/** A real SMTP server on loopback that keeps every message it receives (decoded text). */
export async function startSmtp(): Promise<{ url: string; mails: Array<{ to: string; text: string }>; close(): Promise<void> }> {
  const mails: Array<{ to: string; text: string }> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, done) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), text: decodeQuotedPrintable(raw) });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** Waits until `find` returns something, up to `ms`. */
export async function waitFor<T>(find: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A browser's view of a session: its cookie and CSRF token. */
export interface Browser {
  cookie: string;
  csrf: string;
  setCookie: string;
  data: any;
}

/** Calls the server with a session's cookie (and its CSRF token unless `csrf: false` or another is given). */
export function asBrowser(s: TestServer, b: Pick<Browser, 'cookie' | 'csrf'>) {
  return (method: string, path: string, opts: { body?: unknown; csrf?: string | false; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { cookie: b.cookie, ...opts.headers };
    if (opts.csrf !== false) headers['x-csrf-token'] = opts.csrf ?? b.csrf;
    return s.call(method, path, { body: opts.body, headers });
  };
}

/** Signs in (or signs up, accepts an invite: any call that sets the cookie) and returns the browser's session. */
export async function signedIn(r: { status: number; body: any; headers: Headers }): Promise<Browser> {
  if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${JSON.stringify(r.body)}`);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const m = /^gg_session=([^;]+)/.exec(setCookie);
  if (!m) throw new Error(`no session cookie in ${setCookie}`);
  return { cookie: `gg_session=${m[1]}`, csrf: r.body.data.csrfToken, setCookie, data: r.body.data };
}

/** The token of the first link in a mail (`#token=...`). */
export function linkToken(text: string): { url: string; token: string } {
  const m = /(https?:\/\/\S+#token=([A-Za-z0-9_-]+))/.exec(text);
  if (!m) throw new Error(`no link in mail:\n${text}`);
  return { url: m[1]!, token: m[2]! };
}
