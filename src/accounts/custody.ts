import type { Kysely } from 'kysely';
import type { ApiKeysTable, DB, MemberRole } from '../store/index.js';
import { Errors } from '../errors.js';
import type { Scope } from './keys.js';
import { capScopes } from './roles.js';

/**
 * Who manages a key (decision 1907): the operator (CLI, admin API: every key), a member of the
 * key's account (an owner or operator: every key of the account; a member: the keys they made),
 * or a key of the account (the keys it made, never more than it may do itself).
 */
export type KeyActor =
  { kind: 'operator' } | { kind: 'member'; accountId: string; memberId: string; role: MemberRole } | { kind: 'key'; accountId: string; keyId: string };

export const OPERATOR: KeyActor = { kind: 'operator' };

type Lineage = Pick<ApiKeysTable, 'id' | 'created_by'>;

/** The member or key id an actor writes into `created_by`; null for the operator. */
export function makerId(actor: KeyActor): string | null {
  return actor.kind === 'operator' ? null : actor.kind === 'member' ? actor.memberId : actor.keyId;
}

/** True when `maker` made `key`, or made the key that made it, and so on. */
function madeBy(key: Lineage, maker: string, keys: Map<string, Lineage>): boolean {
  const seen = new Set<string>();
  for (let by = key.created_by; by && !seen.has(by); by = keys.get(by)?.created_by ?? null) {
    if (by === maker) return true;
    seen.add(by);
  }
  return false;
}

/** The ids of the keys `root` made, directly or through keys it made. */
export function keysMadeBy(root: string, keys: Lineage[]): string[] {
  const byMaker = new Map<string, Lineage>(keys.map((k) => [k.id, k]));
  return keys.filter((k) => k.id !== root && madeBy(k, root, byMaker)).map((k) => k.id);
}

/** Who made each key of the account. */
export function keyLineage(trx: Kysely<DB>, accountId: string): Promise<Lineage[]> {
  return trx.selectFrom('api_keys').select(['id', 'created_by']).where('account_id', '=', accountId).execute();
}

/**
 * Revokes the key at `at`, and with it every key it made (directly or through keys it made), inside
 * the caller's transaction; a key already revoked keeps its first time. Who may do it is the
 * caller's to check.
 */
export async function revokeKeyIn(trx: Kysely<DB>, key: Pick<ApiKeysTable, 'id' | 'account_id'>, at: number): Promise<void> {
  const lineage = await keyLineage(trx, key.account_id);
  await trx
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', 'in', [key.id, ...keysMadeBy(key.id, lineage)])
    .where('revoked_at', 'is', null)
    .execute();
}

/** Refuses a key of another account (404, as an unknown id) and a key the actor may not manage (403). */
export function checkCustody(actor: KeyActor, key: ApiKeysTable, keys: Lineage[]): void {
  if (actor.kind === 'operator') return;
  if (key.account_id !== actor.accountId) throw Errors.notFound(`no API key ${JSON.stringify(key.id)}`);
  if (actor.kind === 'member' && actor.role !== 'member') return;
  const maker = makerId(actor)!;
  if (madeBy(key, maker, new Map(keys.map((k) => [k.id, k])))) return;
  throw Errors.forbidden(
    actor.kind === 'member'
      ? `a member manages only the keys they made, and the keys those made (key ${key.id} is not one); an owner of the account manages every key`
      : `an API key manages only the keys it made, and the keys those made (key ${key.id} is not one)`,
  );
}

/** What a key may still be given when another key makes or changes it: no more than the making key has. */
export interface MakerBounds {
  keyId: string;
  scopes: Scope[] | null;
  models: string[] | null;
  expiresAt: number | null;
  hasBudget: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A key with a budget makes and changes no keys: their spend would not count against its budget. */
export function checkMakerBudget(maker: MakerBounds): void {
  if (maker.hasBudget) {
    throw Errors.forbidden(
      `this API key has a budget, so it cannot make or change keys (their spend would not count against its budget); use a key without a budget or a member's session`,
    );
  }
}

/**
 * The scopes, models and expiry of a key made by `maker`: missing ones are the maker's, given ones
 * must lie within the maker's (403 naming the field and what the maker has).
 */
export function boundNewKey(
  maker: MakerBounds,
  want: { scopes: Scope[]; models: string[]; expiresAt: number | null | undefined },
): { scopes: Scope[]; models: string[]; expiresAt: number | null } {
  checkMakerBudget(maker);
  let { scopes, models } = want;
  if (maker.scopes) {
    if (scopes.length === 0) scopes = maker.scopes;
    const extra = scopes.find((s) => !maker.scopes!.includes(s));
    if (extra !== undefined) {
      throw Errors.forbidden(`scopes: this API key cannot give the scope ${extra} it lacks itself (it has: ${maker.scopes.join(', ')})`);
    }
  }
  if (maker.models) {
    if (models.length === 0) models = maker.models;
    const extra = models.find((m) => !maker.models!.includes(m));
    if (extra !== undefined) {
      throw Errors.forbidden(
        `models: this API key cannot give the model ${JSON.stringify(extra)} it may not use itself (it may use: ${maker.models.join(', ')})`,
      );
    }
  }
  const expiresAt = want.expiresAt ?? maker.expiresAt;
  checkExpiryBound(maker, expiresAt);
  return { scopes, models, expiresAt };
}

/** A key made by a key expires no later than its maker (a maker without expiry allows any). */
export function checkExpiryBound(maker: MakerBounds, expiresAt: number | null): void {
  if (maker.expiresAt === null) return;
  if (expiresAt === null || expiresAt > maker.expiresAt) {
    throw Errors.forbidden(
      `expiresAt: a key made by this API key must expire no later than it does, at ${iso(maker.expiresAt)} (got ${expiresAt === null ? 'never' : iso(expiresAt)})`,
    );
  }
}

/**
 * The keys `maker` made (directly or through keys it made) keep only the scopes in `allowed`, inside
 * the caller's transaction: a member who lost a role's scopes (an owner made a member) keeps none
 * of them through their keys (decision 2312). Returns how many keys changed.
 */
export async function capKeysMadeBy(trx: Kysely<DB>, accountId: string, maker: string, allowed: Scope[]): Promise<number> {
  const ids = keysMadeBy(maker, await keyLineage(trx, accountId));
  if (ids.length === 0) return 0;
  const rows = await trx.selectFrom('api_keys').select(['id', 'scopes']).where('id', 'in', ids).execute();
  let changed = 0;
  for (const row of rows) {
    const before = row.scopes ? (JSON.parse(row.scopes) as Scope[]) : null;
    const after = capScopes(before, allowed);
    if (before !== null && after.length === before.length) continue;
    await trx
      .updateTable('api_keys')
      .set({ scopes: JSON.stringify(after) })
      .where('id', '=', row.id)
      .execute();
    changed++;
  }
  return changed;
}
