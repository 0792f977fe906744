import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/** What `gengate login` keeps: the key and the server's address. */
export interface Saved {
  apiKey?: string;
  baseUrl?: string;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** The user's config folder for GenGate: GENGATE_CONFIG_DIR, else $XDG_CONFIG_HOME/gengate, %APPDATA%\gengate on Windows, ~/.config/gengate. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GENGATE_CONFIG_DIR) return env.GENGATE_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'gengate');
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'gengate');
  return path.join(homedir(), '.config', 'gengate');
}

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'client.json');
}

export async function readSaved(env: NodeJS.ProcessEnv = process.env): Promise<Saved> {
  try {
    const parsed = JSON.parse(await readFile(configFile(env), 'utf8')) as Saved;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** Writes the file readable by its owner only (0600, folder 0700), through a temporary file so a crash never leaves half of it. */
export async function writeSaved(saved: Saved, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = configFile(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600); // also when the umask or an older file had other bits
  await rename(tmp, file);
  return file;
}
