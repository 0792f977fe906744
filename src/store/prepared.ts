import type { Compilable, Kysely } from 'kysely';

/**
 * A query compiled once and then run with new argument values: Kysely otherwise rebuilds and
 * compiles the SQL on every call, which costs more than the query itself on hot read paths
 * (auth, balance). `build` receives placeholders and must use each as a plain parameter value.
 */
export function precompile<R, DBT>(db: Kysely<DBT>, arity: number, build: (...args: string[]) => Compilable<R>) {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000gengate-arg-${i}\u0000`);
  const compiled = build(...placeholders).compile();
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  return async (...args: unknown[]): Promise<R[]> => {
    const parameters = compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}
