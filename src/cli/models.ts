import { existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ImportError, importModel, IMPORT_SOURCES, problemText, readDefinitions, type ModelKind } from '../catalog/index.js';
import { ConfigError, loadConfig } from '../config.js';
import { addDefinitionCommands } from './definitions.js';

type Out = (text: string) => void;

/**
 * `gengate models check PATH`: validates model definition files (a file, or a folder's *.yaml,
 * *.yml and *.json) without a database or settings: the format, every reference, price coverage,
 * and names used twice. Each problem is one line `file:line: where: reason` on standard error;
 * the exit code is 1 when there is any.
 */
export function checkModels(target: string, out: Out, err: Out): number {
  let read: ReturnType<typeof readDefinitions>;
  try {
    read = readDefinitions(target);
  } catch (e) {
    err(`${target}: cannot read: ${(e as Error).message}`);
    return 1;
  }
  for (const p of read.problems) err(problemText(p));
  const files = new Set(read.problems.map((p) => p.file)).size;
  if (read.problems.length > 0) {
    err(`${read.problems.length} problem(s) in ${files} file(s); ${read.models.length} definition(s) fine`);
    return 1;
  }
  if (read.models.length === 0) {
    err(`${target}: no definition files (*.yaml, *.yml, *.json)`);
    return 1;
  }
  out(`ok: ${read.models.length} definition(s): ${read.models.map((m) => m.id).join(', ')}`);
  return 0;
}

export interface ImportFlags {
  out?: string;
  force?: boolean;
  id?: string;
  kind?: string;
  keyEnv?: string;
  baseUrl?: string;
  pricingUrl?: string;
  doc?: string;
}

/** Where `--out` puts the draft: the file itself, or `<id>.yaml` in a folder. */
function outFile(out: string, id: string): string {
  return existsSync(out) && statSync(out).isDirectory() ? path.join(out, `${id.replace(/[^A-Za-z0-9._-]+/g, '-')}.yaml`) : out;
}

/**
 * `gengate models import SOURCE`: drafts a definition from an upstream's published schema (decision
 * 3303) to `--out` (a file or a folder; an existing file only with --force) or standard output.
 * Credentials come from the settings (environment or GENGATE_CONFIG). Exit code 1 with one line on
 * standard error when the import fails; nothing is written then.
 */
export async function importModels(source: string, flags: ImportFlags, out: Out, err: Out, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const secrets = loadConfig(env).secrets;
    const result = await importModel({
      source,
      secrets,
      today: new Date().toISOString().slice(0, 10),
      warn: (t) => err(`warning: ${t}`),
      ...(flags.id !== undefined ? { id: flags.id } : {}),
      ...(flags.kind !== undefined ? { kind: flags.kind as ModelKind } : {}),
      ...(flags.keyEnv !== undefined ? { keyEnv: flags.keyEnv } : {}),
      ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
      ...(flags.pricingUrl !== undefined ? { pricingUrl: flags.pricingUrl } : {}),
      ...(flags.doc !== undefined ? { doc: flags.doc } : {}),
    });
    if (flags.out === undefined) {
      out(result.text.trimEnd());
      return 0;
    }
    const file = outFile(flags.out, result.id);
    if (existsSync(file) && !flags.force) throw new ImportError(`${file} exists: choose another --out, or pass --force to replace it`);
    // A whole file or none: written beside, then renamed over.
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, result.text);
      renameSync(tmp, file);
    } catch (e) {
      throw new ImportError(`cannot write ${file}: ${(e as Error).message}`);
    }
    err(`drafted ${result.id} in ${file}: set its price (SET-PRICE), read its notes, then run gengate models check ${file}`);
    return 0;
  } catch (e) {
    if (!(e instanceof ImportError || e instanceof ConfigError)) throw e;
    err(`gengate models import: ${e.message}`);
    return 1;
  }
}

export function addModelsCommands(program: Command, out: Out, err: Out, run?: Parameters<typeof addDefinitionCommands>[1]): void {
  const models = program
    .command('models')
    .description('model definitions: files, and the versions stored in the database (docs/models.md "Add a model in five minutes")');
  if (run) addDefinitionCommands(models, run, out, err);
  models
    .command('check <path>')
    .description('validate definition files (a file or a folder): each problem as file:line and the reason')
    .action((target: string) => {
      process.exitCode = checkModels(target, out, err);
    });
  models
    .command('import <source>')
    .description(
      `draft a definition from an upstream's published schema: ${Object.values(IMPORT_SOURCES)
        .map((s) => s.example)
        .join(', ')} (docs/models.md "Import from an upstream")`,
    )
    .option('--out <path>', 'write the draft to this file (or into this folder as <id>.yaml) instead of standard output')
    .option('--force', 'replace an existing --out file')
    .option('--id <id>', "the model's id in GenGate (default: the upstream's own name)")
    .option('--kind <kind>', 'image, video, audio, music or speech (default: from the upstream, or guessed)')
    .option(
      '--key-env <setting>',
      "the setting holding the credential, also written as the route's key_env (default FAL_KEY, REPLICATE_API_TOKEN, KIE_API_KEY)",
    )
    .option('--base-url <url>', 'the upstream address the schema is read from (default https://fal.ai, https://api.replicate.com, https://docs.kie.ai)')
    .option('--pricing-url <url>', "fal: the address of fal's pricing API (default https://api.fal.ai)")
    .option('--doc <file-or-url>', "read the upstream's document from this file or address (kie.ai: the model's documentation page)")
    .action(async (source: string, flags: ImportFlags) => {
      process.exitCode = await importModels(source, flags, out, err);
    });
}
