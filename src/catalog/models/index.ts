import { KIE_ALIASES } from '../kie.js';
import { addAliases } from '../mapping.js';
import type { ModelDef } from '../types.js';
import { gptImageEdit, gptImageText, nanoBanana, nanoBanana2, nanoBananaEdit, nanoBananaPro, seedreamFlash, seedreamPro } from './image.js';
import { sunoV6 } from './music.js';
import { seedance15Pro, seedance20, seedance20Fast, seedance20Mini, seedance25 } from './seedance.js';
import { grokImagine, grokImagine15, higgsfieldGenjutsu, wan27, wan30 } from './video.js';

/** The 19 models GenGate ships, in the order of SPEC "Known values of the model field". */
const MODELS: readonly ModelDef[] = [
  nanoBanana,
  nanoBananaEdit,
  nanoBanana2,
  nanoBananaPro,
  seedreamPro,
  seedreamFlash,
  gptImageText,
  gptImageEdit,
  wan30,
  higgsfieldGenjutsu,
  wan27,
  seedance25,
  seedance20,
  seedance20Fast,
  seedance20Mini,
  seedance15Pro,
  grokImagine15,
  grokImagine,
  sunoV6,
];

/** The shipped models with the kie.ai ids as aliases carrying their input mappings (DECISIONS §18). */
export const DEFAULT_MODELS: readonly ModelDef[] = addAliases(MODELS, KIE_ALIASES, 'src/catalog/kie.ts');
