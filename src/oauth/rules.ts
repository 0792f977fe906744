import type { Scope } from '../accounts/index.js';

/**
 * An OAuth refusal in OAuth's own shape (`{error, error_description}`, RFC 6749 §5.2), not
 * GenGate's envelope: OAuth clients read these fields. `redirect`: an authorization request
 * error that goes back to the client's checked redirect URI (`to`); otherwise it is shown.
 */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly redirect = false,
    readonly to?: { redirectUri: string; state: string | null },
  ) {
    super(description);
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** What a client registers. */
export interface ClientMetadata {
  name: string;
  redirectUris: string[];
  scope: string | undefined;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes no redirect may use: they run code or read files in the browser. */
const NEVER = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:']);

const invalid = (error: string, msg: string) => new OAuthError(400, error, msg);

/**
 * Checks an RFC 7591 registration: 1 to 10 redirect URIs, each https, http on a loopback host
 * (native apps, RFC 8252 §7.3) or an app's own scheme (`cursor://...`), without a fragment;
 * grant and response types within what GenGate offers; a name of at most 100 characters.
 */
export function checkClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('invalid_client_metadata', 'the body must be a JSON object (RFC 7591)');
  const b = body as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) {
    throw invalid('invalid_redirect_uri', 'redirect_uris must be a list of 1 to 10 redirect URIs');
  }
  for (const u of uris) checkRedirectUri(u);
  for (const [field, allowed] of [
    ['grant_types', ['authorization_code', 'refresh_token']],
    ['response_types', ['code']],
  ] as const) {
    const v = b[field];
    if (v === undefined) continue;
    const bad = Array.isArray(v) ? v.find((x) => !(allowed as readonly unknown[]).includes(x)) : v;
    if (!Array.isArray(v) || bad !== undefined) {
      throw invalid('invalid_client_metadata', `${field} may hold only ${allowed.join(', ')} (got ${JSON.stringify(bad ?? v)})`);
    }
  }
  const name = b.client_name === undefined ? 'MCP client' : b.client_name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 100) {
    throw invalid('invalid_client_metadata', `client_name must be 1 to 100 characters (got ${JSON.stringify(name).slice(0, 120)})`);
  }
  if (b.scope !== undefined) readScopes(b.scope, null, (m) => invalid('invalid_client_metadata', m));
  return { name: name.trim(), redirectUris: uris as string[], scope: typeof b.scope === 'string' ? b.scope : undefined };
}

function checkRedirectUri(u: unknown): void {
  let url: URL;
  try {
    if (typeof u !== 'string' || u.length > 2000) throw new Error();
    url = new URL(u);
  } catch {
    throw invalid('invalid_redirect_uri', `each redirect URI must be an absolute URI of at most 2000 characters (got ${JSON.stringify(u).slice(0, 200)})`);
  }
  if (url.hash) throw invalid('invalid_redirect_uri', `a redirect URI must not have a fragment (got ${u})`);
  if (NEVER.has(url.protocol)) throw invalid('invalid_redirect_uri', `a redirect URI must not use ${url.protocol} (got ${u})`);
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) {
    throw invalid('invalid_redirect_uri', `a redirect URI must be https, http on localhost / 127.0.0.1 / [::1], or an app's own scheme (got ${u})`);
  }
}

/**
 * The scopes of a `scope` parameter (space-separated): each one of `allowed` (any GenGate scope
 * when null); missing or empty: all of `allowed`.
 */
export function readScopes(v: unknown, allowed: readonly Scope[] | null, fail: (m: string) => Error = (m) => new Error(m)): Scope[] {
  const all = allowed ?? [];
  if (v === undefined || v === '') return [...all];
  if (typeof v !== 'string') throw fail(`scope must be space-separated scopes (got ${JSON.stringify(v)})`);
  const asked = [...new Set(v.split(' ').filter(Boolean))];
  const known = allowed ?? ['tasks:read', 'tasks:write', 'files:write', 'balance:read'];
  const bad = asked.find((s) => !known.includes(s as Scope));
  if (bad !== undefined) throw fail(`scope ${JSON.stringify(bad)} is not offered; the scopes are ${known.join(', ')}`);
  return asked as Scope[];
}
