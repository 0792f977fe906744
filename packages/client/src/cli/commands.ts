import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GenGate } from '../client.js';
import { resultFiles, runResult } from '../results.js';
import type { ModelInfo, Task, TaskState } from '../types.js';
import { UsageError } from './exit.js';
import { download, progressPrinter, taskRows, type Io } from './output.js';
import { DEFAULT_BASE_URL, readSaved, writeSaved } from './settings.js';

/** Options every client command takes. */
const COMMON = {
  'base-url': { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | string[] | undefined>;

function parse(args: string[], options: Options): { values: Values; positionals: string[] } {
  try {
    const r = parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
    return { values: r.values as Values, positionals: r.positionals };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** The client of the command: flags, then GENGATE_API_KEY / GENGATE_BASE_URL, then what `gengate login` saved. */
async function client(values: Values, env: NodeJS.ProcessEnv, needKey = true): Promise<GenGate> {
  const saved = await readSaved(env);
  const apiKey = (values.key as string | undefined) ?? env.GENGATE_API_KEY ?? saved.apiKey;
  if (needKey && !apiKey) throw new UsageError('no API key: run `gengate login`, set GENGATE_API_KEY or pass --key');
  const baseUrl = (values['base-url'] as string | undefined) ?? env.GENGATE_BASE_URL ?? saved.baseUrl ?? DEFAULT_BASE_URL;
  const poll = Number(env.GENGATE_POLL_MS);
  return new GenGate({ apiKey, baseUrl, pollIntervalMs: poll > 0 ? poll : undefined });
}

const json = (io: Io, value: unknown) => io.out(`${JSON.stringify(value, null, 2)}\n`);

function seconds(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} must be a number of seconds above 0 (got "${text}")`);
  return n * 1000;
}

/** `key=value`: the value as JSON when it reads as JSON (numbers, true, arrays), else as text. */
function setting(pair: string): [string, unknown] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`--set takes key=value (got "${pair}")`);
  const raw = pair.slice(at + 1);
  try {
    return [pair.slice(0, at), JSON.parse(raw)];
  } catch {
    return [pair.slice(0, at), raw];
  }
}

/** Uploads `--file [field=]path` and puts the link where the model takes that kind of file. */
async function attach(gg: GenGate, model: ModelInfo, input: Record<string, unknown>, spec: string): Promise<void> {
  const eq = spec.indexOf('=');
  const [named, file] = eq > 0 && !/^[a-zA-Z]:[\\/]/.test(spec) ? [spec.slice(0, eq), spec.slice(eq + 1)] : [undefined, spec];
  const up = await gg.files.upload(file);
  const limits = model.limits ?? { frames: false };
  const byKind =
    up.kind === 'image'
      ? (limits.images?.field ?? (limits.frames ? 'first_frame_url' : undefined))
      : up.kind === 'video'
        ? limits.videos?.field
        : limits.audios?.field;
  const field = named ?? byKind;
  if (!field) throw new UsageError(`${model.id} takes no ${up.kind} file; name the input field as --file FIELD=${file}`);
  const props = (model.parameters.properties ?? {}) as Record<string, { type?: string }>;
  if (props[field]?.type === 'array') input[field] = [...((input[field] as unknown[] | undefined) ?? []), up.url];
  else input[field] = up.url;
}

export async function login(args: string[], io: Io, env: NodeJS.ProcessEnv, stdin: () => Promise<string>): Promise<void> {
  const { values } = parse(args, {});
  const saved = await readSaved(env);
  const apiKey = (values.key as string | undefined) ?? env.GENGATE_API_KEY ?? (await stdin()).trim();
  if (!apiKey) throw new UsageError('give the key with --key, GENGATE_API_KEY or on standard input');
  const baseUrl = (values['base-url'] as string | undefined) ?? env.GENGATE_BASE_URL ?? saved.baseUrl ?? DEFAULT_BASE_URL;
  const balance = await new GenGate({ apiKey, baseUrl }).balance(); // refuses a wrong key or address before it is kept
  const file = await writeSaved({ apiKey, baseUrl }, env);
  if (values.json) json(io, { file, baseUrl, balance });
  else io.out(`logged in to ${baseUrl} (balance ${balance.balance} ${balance.currency}); key kept in ${file}\n`);
}

export async function balance(args: string[], io: Io, env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parse(args, {});
  const b = await (await client(values, env)).balance();
  if (values.json) json(io, b);
  else io.out(`${b.balance} ${b.currency} (${b.balanceRub} RUB)\n`);
}

export async function upload(args: string[], io: Io, env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parse(args, {});
  if (positionals.length === 0) throw new UsageError('usage: gengate upload FILE...');
  const gg = await client(values, env);
  const done = [];
  for (const file of positionals) {
    const up = await gg.files.upload(file);
    done.push(up);
    if (!values.json) io.out(`${up.url}  ${up.kind}${up.seconds ? ` ${up.seconds} s` : ''}\n`);
  }
  if (values.json) json(io, done);
}

/** Waits for a task with the progress line, downloads its files to --out, prints the result. */
async function finish(gg: GenGate, taskId: string, values: Values, io: Io, started: number): Promise<void> {
  const progress = progressPrinter(io, started);
  let task: Task;
  try {
    task = await gg.tasks.wait(taskId, {
      onProgress: values.json ? undefined : progress.show,
      timeoutMs: seconds(values.timeout as string | undefined, 'timeout'),
    });
  } finally {
    progress.done();
  }
  const result = runResult(task);
  if (!values.json) io.err(`${task.state} · ${((Date.now() - started) / 1000).toFixed(1)} s · $${task.costUsd}\n`);
  const saved = values.out ? await download(gg, result.files, values.out as string, taskId) : [];
  if (values.json) json(io, { ...result, saved });
  else io.out(`${[...(saved.length ? saved : result.files.map((f) => f.url))].join('\n')}\n`);
}

export async function run(args: string[], io: Io, env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parse(args, {
    prompt: { type: 'string', short: 'p' },
    set: { type: 'string', multiple: true },
    file: { type: 'string', multiple: true },
    out: { type: 'string', short: 'o' },
    timeout: { type: 'string' },
    'callback-url': { type: 'string' },
  });
  const [modelName, ...rest] = positionals;
  if (!modelName || rest.length) throw new UsageError('usage: gengate run MODEL [--prompt TEXT] [--set key=value]... [--file [field=]PATH]... [--out DIR]');
  const started = Date.now();
  const gg = await client(values, env);
  const input: Record<string, unknown> = {};
  if (values.prompt !== undefined) input.prompt = values.prompt;
  for (const pair of (values.set as string[] | undefined) ?? []) {
    const [k, v] = setting(pair);
    input[k] = v;
  }
  const files = (values.file as string[] | undefined) ?? [];
  if (files.length) {
    const model = (await gg.models.list()).find((m) => m.id === modelName || m.aliases.includes(modelName));
    if (!model) throw new UsageError(`unknown model "${modelName}"; \`curl ${gg.transport.baseUrl}/api/v1/models\` lists them`);
    for (const f of files) await attach(gg, model, input, f);
  }
  const created = await gg.tasks.create(modelName, input, { callBackUrl: values['callback-url'] as string | undefined });
  if (!values.json) io.err(`task ${created.taskId}\n`);
  await finish(gg, created.taskId, values, io, started);
}

export async function tasks(args: string[], io: Io, env: NodeJS.ProcessEnv): Promise<void> {
  const [sub, ...more] = args;
  const { values, positionals } = parse(more, {
    limit: { type: 'string' },
    state: { type: 'string' },
    all: { type: 'boolean' },
    out: { type: 'string', short: 'o' },
    timeout: { type: 'string' },
  });
  const gg = await client(values, env);
  const id = () => {
    if (positionals.length !== 1) throw new UsageError(`usage: gengate tasks ${sub} TASK_ID`);
    return positionals[0]!;
  };
  switch (sub) {
    case 'ls':
    case 'list': {
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      const query = { limit, state: values.state as TaskState | undefined };
      const items: Task[] = [];
      if (values.all) for await (const t of gg.tasks.list(query)) items.push(t);
      else items.push(...(await gg.tasks.page(query)).items);
      if (values.json) json(io, items);
      else io.out(items.length ? `${taskRows(items)}\n` : 'no tasks\n');
      return;
    }
    case 'get': {
      const t = await gg.tasks.get(id());
      if (values.json) json(io, t);
      else
        io.out(
          `${taskRows([t])}\n${resultFiles(t)
            .map((f) => `${f.url}\n`)
            .join('')}${t.failMsg ? `failed (${t.failCode}): ${t.failMsg}\n` : ''}`,
        );
      return;
    }
    case 'cancel': {
      const r = await gg.tasks.cancel(id());
      if (values.json) json(io, r);
      else io.out(`${r.taskId} cancelled${r.refunded ? ', refunded' : ''}\n`);
      return;
    }
    case 'wait':
      return finish(gg, id(), values, io, Date.now());
    default:
      throw new UsageError('usage: gengate tasks ls|get|cancel|wait ...');
  }
}
