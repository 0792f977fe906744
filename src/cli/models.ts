import type { Command } from 'commander';
import { problemText, readDefinitions } from '../catalog/index.js';

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

export function addModelsCommands(program: Command, out: Out, err: Out): void {
  program
    .command('models')
    .description('model definition files (docs/models.md "Add a model in five minutes")')
    .command('check <path>')
    .description('validate definition files (a file or a folder): each problem as file:line and the reason')
    .action((target: string) => {
      process.exitCode = checkModels(target, out, err);
    });
}
