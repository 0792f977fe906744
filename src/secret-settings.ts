/**
 * Settings whose values are secrets, whatever shape they arrive in: a start-up error names the
 * setting and what it must be, never the value (issue 39 finding 9; decision 2302). A malformed
 * secret is usually a real one pasted with a stray character, so it is as secret as a good one.
 */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASS)(_|$)/;
/** Settings that are URLs and may carry a password in their user part (user:pass@host). */
const URL_WITH_CREDENTIALS = new Set(['DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT']);

/** Whether the value of setting `name` is a secret (or may hold one) and is never shown whole. */
export function isSecretSetting(name: string): boolean {
  return SECRET_NAME.test(name) || URL_WITH_CREDENTIALS.has(name);
}

/** How a start-up error shows the value `given` of setting `name`: as it is, or without its secret parts. */
export function shownSetting(name: string, given: unknown): string {
  if (given === undefined) return 'not set';
  if (!isSecretSetting(name)) return `got ${JSON.stringify(given)}`;
  const text = String(given);
  const hidden = `got a value of ${text.length} characters, not shown`;
  if (!URL_WITH_CREDENTIALS.has(name)) return hidden;
  // A URL's scheme and host help find the mistake; its user part (and anything unparsable) stays hidden.
  const m = /^([a-z][a-z0-9+.-]*:(?:\/\/)?)([^/?#]*)(.*)$/i.exec(text);
  if (!m) return hidden;
  const at = m[2]!.lastIndexOf('@');
  const host = at === -1 ? m[2]! : `[hidden]@${m[2]!.slice(at + 1)}`;
  // A path or query may hold a password too (?password=...): only its length is shown.
  const rest = m[3] ? ` and ${m[3].length} more characters` : '';
  return `got ${JSON.stringify(m[1] + host)}${rest}, credentials not shown`;
}
