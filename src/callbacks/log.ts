import type { Insertable, Kysely } from 'kysely';
import type { AttemptKind, DB, WebhookAttemptsTable } from '../store/index.js';
import type { SecretBox as Box } from '../secrets/index.js';
import { randomId } from '../ids.js';
import type { Attempt } from './deliver.js';
import type { SigningKeys } from './signing.js';

/** The account columns the signing keys are read from. */
export const KEY_COLUMNS = ['accounts.webhook_secret', 'accounts.webhook_secret_previous', 'accounts.webhook_secret_previous_until'] as const;

/** The signing keys of an account at `now`: its secret, and the previous one while its overlap lasts (decision 1905). */
export function signingKeys(
  box: Box,
  row: { webhook_secret: string; webhook_secret_previous: string | null; webhook_secret_previous_until: number | null },
  now: number,
): SigningKeys {
  const live = row.webhook_secret_previous !== null && row.webhook_secret_previous_until !== null && Number(row.webhook_secret_previous_until) > now;
  return { secret: box.open(row.webhook_secret), previous: live ? box.open(row.webhook_secret_previous!) : null };
}

/** What one logged attempt was about. */
export interface AttemptSubject {
  accountId: string;
  taskId: string | null;
  eventId: string | null;
  kind: AttemptKind;
  url: string;
  webhookId: string;
}

/** The delivery log's row of one attempt, with a new id. */
export function attemptRow(s: AttemptSubject, a: Attempt, at: number): Insertable<WebhookAttemptsTable> & { id: string } {
  return {
    id: randomId('att_', 12),
    account_id: s.accountId,
    task_id: s.taskId,
    event_id: s.eventId,
    kind: s.kind,
    url: s.url,
    webhook_id: s.webhookId,
    at,
    ok: a.ok ? 1 : 0,
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
  };
}

/** Writes one attempt to the delivery log, in the caller's transaction; returns its id. */
export async function logAttempt(trx: Kysely<DB>, s: AttemptSubject, a: Attempt, at: number): Promise<string> {
  const row = attemptRow(s, a, at);
  await trx.insertInto('webhook_attempts').values(row).execute();
  return row.id;
}

/** One attempt as the API shows it. */
export interface AttemptView {
  id: string;
  kind: AttemptKind;
  url: string;
  webhookId: string;
  /** Epoch ms, like the Task's times. */
  at: number;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export function attemptView(r: {
  id: string;
  kind: AttemptKind;
  url: string;
  webhook_id: string;
  at: number;
  ok: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}): AttemptView {
  return {
    id: r.id,
    kind: r.kind,
    url: r.url,
    webhookId: r.webhook_id,
    at: Number(r.at),
    ok: Number(r.ok) === 1,
    statusCode: r.status_code === null ? null : Number(r.status_code),
    error: r.error,
    durationMs: Number(r.duration_ms),
  };
}
