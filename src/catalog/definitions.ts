import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../config.js';
import { compileDefinition } from './compile.js';
import { DEFINITION_SCHEMA, type Definition } from './format.js';
import type { ModelDef } from './types.js';

/**
 * Reading definition files (YAML, or JSON, which the same parser reads): parse with source
 * positions, check against the format's schema, compile. Every problem names the file, the line
 * and the place (`inputs.duration.default`) with the reason; a file with a problem yields no model.
 */

/** One problem of a definition file. */
export interface DefinitionProblem {
  readonly file: string;
  readonly line: number;
  /** Dotted path of the place in the definition (empty for a syntax error). */
  readonly where: string;
  readonly why: string;
}

/** `file:line: where: why`, as `gengate models check` prints it. */
export function problemText(p: DefinitionProblem): string {
  return `${p.file}:${p.line}: ${p.where ? `${p.where}: ` : ''}${p.why}`;
}

/** A problem found by the compiler, at a dotted path of the definition. */
export class DefinitionError extends ConfigError {
  constructor(
    readonly where: string,
    readonly why: string,
  ) {
    super(`${where}: ${why}`);
  }
}

/** Extensions read as definitions in a folder. */
export const DEFINITION_FILES = /\.(ya?ml|json)$/i;
/** A file larger than this is refused before parsing (a definition is a few kB). */
const MAX_BYTES = 1_000_000;

type Segment = string | number;

/** `aliases[0].input.ratio` → ['aliases', 0, 'input', 'ratio'] (dots inside keys are matched back by locate). */
function segments(where: string): Segment[] {
  const out: Segment[] = [];
  for (const part of where.match(/[^.[\]]+|\[\d+\]/g) ?? []) out.push(/^\[\d+\]$/.test(part) ? Number(part.slice(1, -1)) : part.replace(/^"|"$/g, ''));
  return out;
}

/** The line of the deepest node along `path` (a key's own line when it is the last step). */
function locate(doc: Document, lines: LineCounter, path: readonly Segment[]): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: [number] } | null)?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    if (isSeq(node) && typeof path[i] === 'number') {
      node = node.items[path[i] as number];
    } else if (isMap(node)) {
      // Keys may hold dots ("v4.5"): try the longest run of steps that names a key.
      let hit: { pair: (typeof node.items)[number]; used: number } | undefined;
      for (let used = path.length - i; used >= 1 && !hit; used--) {
        const key = path.slice(i, i + used).join('.');
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
        if (pair) hit = { pair, used };
      }
      if (!hit) break;
      i += hit.used - 1;
      const key = hit.pair.key as { range?: [number] };
      if (i === path.length - 1 || !hit.pair.value) {
        offset = key.range?.[0] ?? offset;
        break;
      }
      node = hit.pair.value;
    } else break;
    const range = (node as { range?: [number] } | undefined)?.range;
    if (!range) break;
    offset = range[0];
  }
  return lines.linePos(offset).line;
}

/** The issue of a zod failure worth showing: for a union, the branch that got furthest. */
function deepest(issue: z.core.$ZodIssue): { path: Segment[]; message: string } {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const best = [...issue.errors].sort((a, b) => a.length - b.length || depth(b) - depth(a))[0]!;
    if (best[0]) {
      const inner = deepest(best[0]);
      return { path: [...(issue.path as Segment[]), ...inner.path], message: inner.message };
    }
  }
  if (issue.code === 'unrecognized_keys') {
    return { path: [...(issue.path as Segment[]), issue.keys[0]!], message: `unknown field ${issue.keys[0]} (the format: docs/model-definition.schema.json)` };
  }
  return { path: issue.path as Segment[], message: issue.message };
}
const depth = (issues: readonly z.core.$ZodIssue[]) => Math.max(...issues.map((i) => i.path.length));

const dotted = (path: readonly Segment[]) => path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

/**
 * The model of one definition file's text, or its problems (`file` names it in messages; a name
 * ending in .json is read with JSON.parse, much faster than YAML, and parsed again for positions
 * only when there is a problem to place).
 */
export function readDefinition(file: string, text: string): { model?: ModelDef; definition?: Definition; problems: DefinitionProblem[] } {
  let parsed: { doc: Document; lines: LineCounter } | undefined;
  const positions = () => {
    if (!parsed) {
      const lines = new LineCounter();
      parsed = { doc: parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true }), lines };
    }
    return parsed;
  };
  const at = (path: readonly Segment[]) => locate(positions().doc, positions().lines, path);
  const problem = (line: number, where: string, why: string) => ({ problems: [{ file, line, where, why }] });
  let data: unknown;
  try {
    data = /\.json$/i.test(file) ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (data === undefined) {
    const { doc, lines } = positions();
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      return problem(lines.linePos(e.pos[0]).line, '', `not valid YAML: ${e.message.split('\n')[0]}`);
    }
    data = doc.toJS({ maxAliasCount: 100 });
  }
  const checked = DEFINITION_SCHEMA.safeParse(data);
  if (!checked.success) {
    return {
      // An unknown key first: a misspelt key also shows as a missing one, and the misspelling is the news.
      problems: [...checked.error.issues]
        .sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'))
        .slice(0, 10)
        .map((issue) => {
          const { path, message } = deepest(issue);
          return { file, line: at(path), where: dotted(path) || '(top level)', why: message };
        }),
    };
  }
  try {
    return { model: compileDefinition(checked.data, (where, why) => new DefinitionError(where, why), file), definition: checked.data, problems: [] };
  } catch (e) {
    if (!(e instanceof DefinitionError)) throw e;
    return problem(at(segments(e.where)), e.where, e.why);
  }
}

/** The definition files a path names: the file itself, or the folder's definition files in name order. */
export function definitionFiles(target: string): string[] {
  const stat = statSync(target);
  if (!stat.isDirectory()) return [target];
  return readdirSync(target)
    .filter((name) => DEFINITION_FILES.test(name))
    .sort()
    .map((name) => path.join(target, name));
}

/** Every definition of a file or folder (or of several, in the order given), compiled; problems of all files, and duplicate ids across files. */
export function readDefinitions(target: string | readonly string[]): { models: ModelDef[]; definitions: Definition[]; problems: DefinitionProblem[] } {
  const models: ModelDef[] = [];
  const definitions: Definition[] = [];
  const problems: DefinitionProblem[] = [];
  const byName = new Map<string, string>();
  for (const file of (typeof target === 'string' ? [target] : target).flatMap(definitionFiles)) {
    let text: string;
    try {
      if (statSync(file).size > MAX_BYTES) throw new Error(`larger than ${MAX_BYTES} bytes`);
      text = readFileSync(file, 'utf8');
    } catch (e) {
      problems.push({ file, line: 1, where: '', why: `cannot read: ${(e as Error).message}` });
      continue;
    }
    const read = readDefinition(file, text);
    problems.push(...read.problems);
    if (!read.model) continue;
    const clash = [read.model.id, ...read.model.aliases].find((n) => byName.has(n));
    if (clash !== undefined) {
      problems.push({ file, line: 1, where: 'id', why: `the name ${JSON.stringify(clash)} is already used by ${byName.get(clash)}` });
      continue;
    }
    for (const n of [read.model.id, ...read.model.aliases]) byName.set(n, `${read.model.id} (${file})`);
    models.push(read.model);
    definitions.push(read.definition!);
  }
  return { models, definitions, problems };
}
