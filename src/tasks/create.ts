import type { Kysely } from 'kysely';
import { z } from 'zod';
import { keyAllowsModel, type Principal } from '../accounts/index.js';
import { checkKeyBudgets } from './key-budgets.js';
import { formatUsd, type Ledger } from '../billing/index.js';
import {
  findModel,
  hasInputMapping,
  resolveDraftFinal,
  routeLimitRefusal,
  routeName,
  validateInput,
  type Catalog,
  type DraftTask,
  type MediaFacts,
} from '../catalog/index.js';
import type { Clock } from '../clock.js';
import { Errors, parseWith, shown } from '../errors.js';
import type { MediaFactsResolver } from '../files/index.js';
import { timeOrderedId } from '../ids.js';
import { quote } from '../pricing/index.js';
import type { Database } from '../store/index.js';
import type { ApiDialect, DB } from '../store/index.js';
import { insertRow } from '../store/index.js';
import { bodyHash, boundTask } from './idempotency.js';
import { DAY_MS, TASK_TIMEOUT_MS } from './states.js';
import { recordCreated } from './transition.js';
import { tracing } from '../tracing/index.js';

const MAX_URL = 2048;

/** True when `u` parses as an absolute http:// or https:// URL (WHATWG parsing, as the callback worker fetches it). */
function isHttpUrl(u: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(u).protocol);
  } catch {
    return false;
  }
}

/**
 * How every URL the check above accepts begins (a URL parser skips leading spaces and control
 * characters and reads the scheme in any case); said as a pattern so the documents can show it.
 */
// eslint-disable-next-line no-control-regex -- URL parsers skip leading control characters, so the pattern must too
const HTTP_SCHEME = /^[\x00-\x20]*[Hh][Tt][Tt][Pp][Ss]?:/;
const NOT_HTTP = 'must be an http:// or https:// URL';

/**
 * createTask's callBackUrl: the one schema that both enforces the rule and documents it (OpenAPI,
 * MCP). Its parse-time part is here; the address part is the network guard's (DECISIONS §14,
 * CreateDeps.checkUrl), which JSON Schema cannot say, so the description does.
 */
const callBackLink = z.string().max(MAX_URL).regex(HTTP_SCHEME, NOT_HTTP).refine(isHttpUrl, NOT_HTTP).meta({ format: 'uri' });
/** An empty string means no callback: a kie.ai client library sends `callBackUrl: ""` on every request (DECISIONS §18). */
const noCallback = z.literal('');
export const callBackUrl = z
  .union([callBackLink, noCallback], {
    // A refused link is refused for the link's reason, not as "matches neither branch".
    error: (issue) => (issue.code === 'invalid_union' ? issue.errors[0]?.[0]?.message : undefined),
  })
  .meta({
    description:
      `Absolute http:// or https:// URL, at most ${MAX_URL} characters, without a user name or password, reaching a public address ` +
      '(not private, loopback, link-local or metadata, unless the server sets ALLOW_PRIVATE_NETWORK); the result is POSTed there when the task finishes. ' +
      'An empty string means no callback, as leaving it out does',
  });

/** SPEC endpoint 1 body; unknown top-level fields are refused so a misspelt callBackUrl is not silently ignored. */
const createBody = z.object({ model: z.unknown(), input: z.unknown(), callBackUrl: callBackUrl.optional() });
const BODY_FIELDS = ['model', 'input', 'callBackUrl'];

/** What createTask needs from the rest of the service. */
export interface CreateDeps {
  database: Database;
  ledger: Ledger;
  catalog: Catalog;
  clock: Clock;
  facts: MediaFactsResolver;
  publicBaseUrl: string;
  topUpUrl: string;
  /** Refuses a callBackUrl the network guard would never deliver to (DECISIONS §14); throws AppError. */
  checkUrl: (url: string) => Promise<void>;
  /** The content check (DECISIONS §15) on the validated input, after the cheap refusals and before the charge; throws AppError. */
  moderate: (input: Record<string, unknown>, principal: Principal) => Promise<void>;
}

/** No callBackUrl check and no content check (tests and tools that build Tasks without the network guard or a classifier). */
export const NO_CHECKS: Pick<CreateDeps, 'checkUrl' | 'moderate'> = { checkUrl: async () => {}, moderate: async () => {} };

/**
 * A task created through another API's endpoint that answers in that API's shapes (kie.ai's Suno
 * endpoint, decision 0404): the body as that client sent it (kept as `param` and hashed for the
 * Idempotency-Key) and the origin stored on the task.
 */
export interface Via {
  origin: 'suno';
  sent: unknown;
}

export interface Created {
  taskId: string;
  /** True when an Idempotency-Key matched an earlier request: nothing new was created or charged. */
  replayed: boolean;
}

/**
 * createTask: validate, price, then in ONE transaction the charge, the task row, its creation
 * event, the callback outbox row and the idempotency binding (DECISIONS §8). Nothing is bound or
 * charged when anything is refused.
 */
export async function createTask(deps: CreateDeps, principal: Principal, rawBody: unknown, key: string | undefined, via?: Via): Promise<Created> {
  const { database, catalog, clock } = deps;
  if (rawBody === null || typeof rawBody !== 'object' || Array.isArray(rawBody)) {
    throw Errors.invalid(`request body must be a JSON object with model, input and callBackUrl (got ${shown(rawBody)})`);
  }
  for (const field of Object.keys(rawBody)) {
    if (!BODY_FIELDS.includes(field)) {
      const hint = field.toLowerCase() === 'callbackurl' ? ' (did you mean callBackUrl?)' : '';
      throw Errors.invalid(`${field} is not a field of the createTask body${hint}; its fields are model, input and callBackUrl`);
    }
  }
  const body = parseWith(createBody, rawBody, '');
  const hash = key === undefined ? '' : bodyHash(via ? { origin: via.origin, body: via.sent } : rawBody);
  const accountId = principal.accountId;
  if (key !== undefined) {
    const earlier = await boundTask(database.db, accountId, key, hash, clock.now(), false);
    if (earlier) return { taskId: earlier, replayed: true };
  }

  const model = findModel(catalog, body.model);
  if (!keyAllowsModel(principal, model.id) && !keyAllowsModel(principal, String(body.model))) {
    throw Errors.forbidden(`this API key may not use ${model.id} (it may use: ${principal.models!.join(', ')})`);
  }
  const sentFacts = await deps.facts.resolve(accountId, body.input);
  const validated = validateInput(catalog, body.model, body.input, sentFacts, { uploadBaseUrl: deps.publicBaseUrl });
  let input = validated.input;
  let media: MediaFacts = validated.media?.facts ?? sentFacts;
  if (validated.draftFinal) {
    const draft = await findDraft(database.db, accountId, String(input.draft_task_id), clock.now(), model.draft?.keepDays ?? 7);
    input = resolveDraftFinal(catalog, validated, draft);
    media = draft.media;
  }
  // An input the model accepts but one of its routes' upstreams refuses is refused here, before any charge (decision 2503).
  const limit = routeLimitRefusal(model, input);
  if (limit) throw Errors.upstreamLimit(limit);
  if (body.callBackUrl) await deps.checkUrl(body.callBackUrl);
  const price = quote(catalog, model.id, input, media);
  // The cheap refusals come before the content check (asked for with nsfw_check), which may take a share
  // of the image classifier (decision 0305): an account that cannot pay gets its 402 here, unchecked.
  // The charge in the transaction below stays the real check; other requests skip this extra read.
  if (input.nsfw_check === true) {
    await checkKeyBudgets(deps, database.db, principal, price.priceMicros, clock.now());
    const balance = await balanceOf(database.db, accountId);
    if (balance < price.priceMicros) throw insufficient(balance, price.priceMicros, deps.topUpUrl);
    await deps.moderate(input, principal);
  }

  const now = clock.now();
  const taskId = timeOrderedId('tk_', now);
  // One span for the create transaction (decision 2603): a no-op when tracing is off.
  const traceParent = tracing.parentOfActive();
  const created = await tracing.span('tasks.create', { 'gengate.task_id': taskId, 'gengate.model': model.id }, () =>
    database.tx(async (trx) => {
      if (key !== undefined) {
        // Same key from two processes at once: the lock makes the second wait and then find the binding.
        await database.lock(trx, `idempotency:${accountId}:${key}`);
        const earlier = await boundTask(trx, accountId, key, hash, now, true);
        if (earlier) return { taskId: earlier, replayed: true };
      }
      // The key's budget and its makers', read here from the database under their locks (decision 2316).
      await checkKeyBudgets(deps, trx, principal, price.priceMicros, now, trx);
      const charged = await deps.ledger.charge(trx, accountId, price.priceMicros, taskId, `task ${taskId} ${model.id}`, chargingKey(principal), model.id);
      if (!charged.ok) throw insufficient(charged.balance, charged.required, deps.topUpUrl);
      await insertRow(trx, 'tasks', {
        id: taskId,
        account_id: accountId,
        model: model.id,
        state: 'waiting',
        param: JSON.stringify(via ? via.sent : rawBody),
        origin: via ? via.origin : null,
        input: JSON.stringify(input),
        media: Object.keys(media).length > 0 ? JSON.stringify(media) : null,
        callback_url: body.callBackUrl || null,
        price_micros: price.priceMicros,
        final_micros: price.priceMicros,
        auto_length: price.autoLength ? 1 : 0,
        is_draft: input.draft === true ? 1 : 0,
        progress: 0,
        refunded: 0,
        files_expired: 0,
        attempts: 0,
        backend: model.routes[0] ? routeName(model.id, model.routes[0], 0) : 'local',
        run_at: now,
        deadline_at: now + TASK_TIMEOUT_MS,
        created_at: now,
        updated_at: now,
        dialect: dialectOf(catalog, String(body.model), principal),
        // The stored definition version it was validated and priced with (decision 3304); null: the file's.
        ...(model.version !== undefined ? { model_version: model.version } : {}),
        ...(traceParent ? { trace_parent: traceParent } : {}),
      });
      await recordCreated(trx, taskId, now);
      if (body.callBackUrl) {
        await insertRow(trx, 'callbacks', { task_id: taskId, url: body.callBackUrl, status: 'pending', attempts: 0, created_at: now });
      }
      if (key !== undefined) {
        await insertRow(trx, 'idempotency_keys', { account_id: accountId, key, body_hash: hash, task_id: taskId, created_at: now });
      }
      return { taskId, replayed: false };
    }),
  );
  return created;
}

/**
 * The dialect a new task is fixed in (DECISIONS §18, decision 0402): `kie` when it is created under
 * a kie.ai model id (the name sent has an input mapping) or by an account the operator set to
 * `kie`; else `gengate`. Fixed here, in the task's row, so its views never change shape afterwards.
 */
function dialectOf(catalog: Catalog, sentModel: string, principal: Principal): ApiDialect {
  return principal.dialect === 'kie' || hasInputMapping(catalog, sentModel) ? 'kie' : 'gengate';
}

/**
 * The API key a charge is made by (its spend counters, usage per key): the principal's key, or null
 * for a member's own session, whose `keyId` is the member's id (it counts the member's rate limits,
 * decision 1903) and names no key (docs/accounts.md, Usage: `keyId` null is spend without a key).
 */
function chargingKey(principal: Principal): string | null {
  return principal.member ? null : principal.keyId;
}

/** The 402 for a balance below the price. */
function insufficient(balance: number, required: number, topUpUrl: string) {
  return Errors.insufficientBalance(
    `balance ${formatUsd(balance, 4)} USD is less than the price ${formatUsd(required, 3)} USD of this task; top up at ${topUpUrl}`,
    { balance: formatUsd(balance, 4), required: formatUsd(required, 4), currency: 'USD', topUpUrl },
  );
}

/** The account's balance as last committed (a read without a lock: only for refusing early). */
async function balanceOf(db: Kysely<DB>, accountId: string): Promise<number> {
  const row = await db.selectFrom('accounts').select('balance_micros').where('id', '=', accountId).executeTakeFirst();
  return Number(row?.balance_micros ?? 0);
}

/** The finished draft a draft final points at: same account, success, within the draft window (SPEC: 7 days). */
async function findDraft(db: Kysely<DB>, accountId: string, draftId: string, now: number, keepDays: number): Promise<DraftTask & { media: MediaFacts }> {
  const row = await db
    .selectFrom('tasks')
    .select(['id', 'model', 'state', 'input', 'media', 'real_seconds', 'completed_at', 'is_draft'])
    .where('id', '=', draftId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  const id = shown(draftId);
  if (!row) throw Errors.invalid(`input.draft_task_id must be the id of a draft task of this account (got ${id}, which was not found)`);
  if (row.state !== 'success') {
    throw Errors.invalid(`input.draft_task_id must be a draft that finished with success (got ${id}, which is in state ${row.state})`);
  }
  if (Number(row.completed_at) <= now - keepDays * DAY_MS) {
    throw Errors.invalid(
      `input.draft_task_id must be a draft finished in the last ${keepDays} days (got ${id}, finished ${new Date(Number(row.completed_at)).toISOString()})`,
    );
  }
  return {
    taskId: row.id,
    model: row.model,
    input: JSON.parse(row.input) as Record<string, unknown>,
    ...(row.real_seconds !== null ? { realSeconds: Number(row.real_seconds) } : {}),
    media: row.media ? (JSON.parse(row.media) as MediaFacts) : {},
  };
}
