import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type Tool = 'ffmpeg' | 'ffprobe';

/** Where one binary was found: given explicitly, on PATH, or shipped by npm. */
export interface ResolvedBinary {
  path: string;
  source: 'explicit' | 'system' | 'npm';
}

const NPM_PACKAGE: Record<Tool, string> = {
  ffmpeg: '@ffmpeg-installer/ffmpeg',
  ffprobe: '@ffprobe-installer/ffprobe',
};

const resolved = new Map<Tool, ResolvedBinary>();
const explicit = new Map<Tool, string>();

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first executable called `name` on PATH, or null. */
function findOnPath(name: string): string | null {
  const exe = process.platform === 'win32' ? `${name}.exe` : name;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    // An empty PATH entry means the current directory: never pick a binary from there.
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, exe);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

function fromNpm(tool: Tool): string | null {
  try {
    const require = createRequire(import.meta.url);
    const found = (require(NPM_PACKAGE[tool]) as { path?: unknown }).path;
    return typeof found === 'string' && isExecutableFile(found) ? found : null;
  } catch {
    // The installer packages throw (a string, not an Error) on unsupported platforms.
    return null;
  }
}

let changes = 0;

/** Counts setBinary calls, so that what was learnt about the old binaries (the toolchain check) is not reused. */
export function binaryChanges(): number {
  return changes;
}

/** Overrides the binary for a tool (settings or tests); pass null to go back to automatic lookup. */
export function setBinary(tool: Tool, file: string | null): void {
  changes++;
  resolved.delete(tool);
  if (file === null) explicit.delete(tool);
  else explicit.set(tool, path.resolve(file));
}

/**
 * Where each tool is looked for after an explicit path (decision 0303). ffmpeg: the system's first,
 * as the npm build is from 2018 and a distribution's decodes more. ffprobe: the npm build first: it
 * is recent (2023) and static, so it starts in about 2 ms of CPU where a distribution's, linked
 * against some 200 shared libraries, spends about 60 ms in the dynamic loader on every probe.
 */
const ORDER: Record<Tool, ReadonlyArray<'system' | 'npm'>> = { ffmpeg: ['system', 'npm'], ffprobe: ['npm', 'system'] };

/** Resolves ffmpeg or ffprobe once: explicit override, else the system's or the npm-shipped one in the tool's ORDER. */
export function resolveBinary(tool: Tool): ResolvedBinary {
  const cached = resolved.get(tool);
  if (cached) return cached;
  const given = explicit.get(tool);
  let found: ResolvedBinary | null = null;
  if (given !== undefined) found = { path: given, source: 'explicit' };
  else {
    for (const source of ORDER[tool]) {
      const file = source === 'system' ? findOnPath(tool) : fromNpm(tool);
      if (file) {
        found = { path: file, source };
        break;
      }
    }
  }
  if (!found) {
    throw new Error(`${tool} not found: install ${tool} on PATH or run npm install (${NPM_PACKAGE[tool]})`);
  }
  resolved.set(tool, found);
  return found;
}
