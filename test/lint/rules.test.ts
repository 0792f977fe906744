import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

// The project's own eslint.config.js, run through ESLint's API: the capability rule on virtual files
// under src/, and import cycles on real files (no-cycle follows imports on disk).
const root = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

type Message = { rule: string | null; msg: string };

/** Rule ids and messages ESLint reports for `code` as if it were the file at `rel` (under the repository). */
async function lint(rel: string, code: string): Promise<Message[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, rel) });
  return result!.messages.map((m) => ({ rule: m.ruleId, msg: m.message }));
}
const deep = (msgs: Message[]) => msgs.filter((m) => m.rule === 'gengate/capability-imports');

describe('capability imports', () => {
  it('refuses a deep import into another capability, type-only and dynamic ones too', async () => {
    const msgs = await lint(
      'src/tasks/x.ts',
      "import { a } from '../store/prepared.js';\nimport type { B } from '../store/schema.js';\nexport * from '../engine/work.js';\nexport const c = () => import('../backends/local/index.js');\nexport const d: B = a;\n",
    );
    expect(deep(msgs).map((m) => m.msg)).toEqual([
      "'../store/prepared.js' reaches into store/ from outside it; import 'store/index.js' (export it there if needed)",
      "'../store/schema.js' reaches into store/ from outside it; import 'store/index.js' (export it there if needed)",
      "'../engine/work.js' reaches into engine/ from outside it; import 'engine/index.js' (export it there if needed)",
      "'../backends/local/index.js' reaches into backends/ from outside it; import 'backends/index.js' (export it there if needed)",
    ]);
  });

  it('allows index.js of another capability, shared top-level modules and anything inside the own capability', async () => {
    const inside =
      "import { a } from '../store/index.js';\nimport { b } from '../clock.js';\nimport { c } from './local/render.js';\nimport { d } from '../../backends/kinds.js';\nexport const e = [a, b, c, d];\n";
    expect(deep(await lint('src/backends/fal/x.ts', inside))).toEqual([]);
  });

  it('holds top-level modules of src/ to index.js too, and leaves tests free to reach into src/', async () => {
    expect(deep(await lint('src/services.ts', "export { x } from './store/db.js';\n"))).toHaveLength(1);
    expect(deep(await lint('test/tasks/x.test.ts', "export { x } from '../../src/store/db.js';\n"))).toEqual([]);
  });
});

describe('import cycles', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gengate-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a cycle through .js specifiers of .ts files and ignores a type-only one', async () => {
    mkdirSync(path.join(dir, 'value'));
    writeFileSync(path.join(dir, 'value/a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
    writeFileSync(path.join(dir, 'value/b.ts'), "import { a } from './a.js';\nexport const b = () => a;\n");
    mkdirSync(path.join(dir, 'types'));
    writeFileSync(path.join(dir, 'types/a.ts'), "import { type B } from './b.js';\nexport type A = B | 1;\nexport const a = 1;\n");
    writeFileSync(path.join(dir, 'types/b.ts'), "import { a } from './a.js';\nexport type B = 2;\nexport const b = a;\n");
    const outside = new ESLint({ cwd: dir, overrideConfigFile: path.join(root, 'eslint.config.js') });
    const results = await outside.lintFiles(['value/*.ts', 'types/*.ts']);
    const cycles = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'import-x/no-cycle').map(() => path.relative(dir, r.filePath)));
    expect(cycles.sort()).toEqual(['value/a.ts', 'value/b.ts']);
  });
});
