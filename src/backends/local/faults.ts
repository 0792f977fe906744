import type { FailKind } from '../types.js';

/** Failures the local backend can be told to simulate: a SPEC fail code, or a misbehaviour. */
export type LocalFault = '400' | 'nsfw' | '422' | '500' | '501' | '503' | '504' | 'hang' | 'throw' | 'garbage';

const FAULTS: readonly LocalFault[] = ['400', 'nsfw', '422', '500', '501', '503', '504', 'hang', 'throw', 'garbage'];
const MARKER = /gengate:fail=([a-z0-9]+)/i;

/** The fault asked for by a `gengate:fail=<fault>` marker in the prompt, else by the LOCAL_FAIL setting. */
export function faultOf(input: Readonly<Record<string, unknown>>, setting: string): LocalFault | null {
  const text = [input.prompt, input.title, input.style].filter((v) => typeof v === 'string').join(' ');
  const marked = MARKER.exec(text)?.[1]?.toLowerCase();
  if (marked && (FAULTS as readonly string[]).includes(marked)) return marked as LocalFault;
  return (FAULTS as readonly string[]).includes(setting) ? (setting as LocalFault) : null;
}

/** Faults the backend reports at hand-off (the model refuses the input at once). */
export const AT_SUBMIT: Partial<Record<LocalFault, [FailKind, string]>> = {
  '400': ['safety', 'the prompt breaks the safety rules of the model (simulated by the local backend)'],
  nsfw: ['content', 'the content check of the model rejected the prompt (simulated by the local backend)'],
  '422': ['rejected', 'the model rejected the parameters (simulated by the local backend)'],
};

/** Faults the backend reports after accepting the job and working on it. */
export const AFTER_WORK: Partial<Record<LocalFault, [FailKind, string]>> = {
  '500': ['internal', 'the generation service failed (simulated by the local backend)'],
  '501': ['generation', 'the model could not generate this request (simulated by the local backend)'],
  '503': ['unavailable', 'the generation service is temporarily unavailable (simulated by the local backend)'],
  '504': ['timeout', 'the model timed out (simulated by the local backend)'],
};
