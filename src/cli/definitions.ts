import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { problemText, readDefinitions, type DefinitionDetail, type DefinitionView } from '../catalog/index.js';
import type { Core } from '../core.js';

type Run = (fn: (s: Core) => Promise<void>) => Promise<void>;
type Out = (text: string) => void;

/** Who a CLI change is recorded as: --who, else the system user. */
function actor(who: string | undefined): string {
  if (who) return `cli:${who}`;
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

const line = (d: DefinitionView) =>
  `${d.id.padEnd(40)} ${d.kind.padEnd(6)} ${d.source.padEnd(8)} v${String(d.version).padEnd(4)} ${d.retired ? 'retired' : 'in force'}${d.updatedBy ? `  (${d.updatedBy}, ${new Date(d.updatedAt!).toISOString()})` : ''}`;

function detail(d: DefinitionDetail): string {
  const head = `${d.id} — ${d.title} (${d.kind}); ${d.retired ? 'retired' : 'in force'}; source ${d.source}${d.file ? ` (${d.file})` : ''}; stored version ${d.version}`;
  const versions = d.versions.map((v) => `  v${v.version}  ${new Date(v.at).toISOString()}  ${v.action.padEnd(7)} ${v.who}${v.note ? `  "${v.note}"` : ''}`);
  return [head, ...(versions.length ? ['versions (newest first):', ...versions] : ['no stored versions: the definition file is in force'])].join('\n');
}

/**
 * `gengate models list|show|apply|retire|restore` (decision 3307): the stored definitions of the
 * database every process shares, changed as the admin API changes them; every change is a version
 * with who and when, and applies in every process within MODEL_SWITCH_CACHE_MS.
 */
export function addDefinitionCommands(models: Command, run: Run, out: Out, err: Out): void {
  const print = (json: boolean, obj: object, human: string) => out(json ? JSON.stringify(obj) : human);
  models
    .command('list')
    .description('every model with its source (file, database, both), stored version and whether it is retired')
    .option('--json', 'print JSON')
    .action((o) =>
      run(async (s) => {
        const all = await s.definitions.list();
        print(o.json, { definitions: all }, all.map(line).join('\n'));
      }),
    );
  models
    .command('show <id>')
    .description('one model with every stored version (who, when, what)')
    .option('--json', 'print JSON, with the definitions')
    .action((id: string, o) =>
      run(async (s) => {
        const d = await s.definitions.get(id);
        print(o.json, { definition: d }, detail(d));
      }),
    );
  models
    .command('apply <file>')
    .description('store the definitions of a file or folder as new versions, in force in every process (refused whole when any has a problem)')
    .option('--note <text>', 'why, kept with each version')
    .option('--who <name>', 'who makes the change (default: the system user)')
    .option('--json', 'print JSON')
    .action((file: string, o) =>
      run(async (s) => {
        const read = readDefinitions(file);
        if (read.problems.length > 0) {
          for (const p of read.problems) err(problemText(p));
          err(`nothing applied: ${read.problems.length} problem(s)`);
          process.exitCode = 1;
          return;
        }
        // Every one is checked against the catalog in force before any is stored.
        for (const d of read.definitions) s.definitions.check(d.id, d);
        const done: DefinitionDetail[] = [];
        for (const d of read.definitions) done.push(await s.definitions.put(d.id, d, actor(o.who), o.note ? { note: o.note } : {}));
        print(o.json, { definitions: done }, done.map((d) => `${d.id}: version ${d.version} in force`).join('\n'));
      }),
    );
  for (const name of ['retire', 'restore'] as const) {
    const cmd = models
      .command(`${name} <id>`)
      .description(
        name === 'retire' ? 'retire a model: no new tasks in any process; its tasks stay readable' : 'put a retired model (or --version N) back in force',
      )
      .option('--note <text>', 'why, kept with the version')
      .option('--who <name>', 'who makes the change (default: the system user)')
      .option('--json', 'print JSON');
    if (name === 'restore') cmd.option('--version <n>', 'an earlier version to put back in force');
    cmd.action((id: string, o) =>
      run(async (s) => {
        const opts = { ...(o.note ? { note: o.note as string } : {}), ...(o.version ? { version: Number(o.version) } : {}) };
        const d = name === 'retire' ? await s.definitions.retire(id, actor(o.who), opts) : await s.definitions.restore(id, actor(o.who), opts);
        print(o.json, { definition: d }, detail(d));
      }),
    );
  }
}
