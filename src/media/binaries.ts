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

/** Overrides the binary for a tool (settings or tests); pass null to go back to automatic lookup. */
export function setBinary(tool: Tool, file: string | null): void {
  resolved.delete(tool);
  if (file === null) explicit.delete(tool);
  else explicit.set(tool, path.resolve(file));
}

/** Resolves ffmpeg or ffprobe once: explicit override, else a system binary on PATH, else the npm-shipped one. */
export function resolveBinary(tool: Tool): ResolvedBinary {
  const cached = resolved.get(tool);
  if (cached) return cached;
  const given = explicit.get(tool);
  let found: ResolvedBinary | null = null;
  if (given !== undefined) found = { path: given, source: 'explicit' };
  else {
    const system = findOnPath(tool);
    if (system) found = { path: system, source: 'system' };
    else {
      const shipped = fromNpm(tool);
      if (shipped) found = { path: shipped, source: 'npm' };
    }
  }
  if (!found) {
    throw new Error(`${tool} not found: install ${tool} on PATH or run npm install (${NPM_PACKAGE[tool]})`);
  }
  resolved.set(tool, found);
  return found;
}
