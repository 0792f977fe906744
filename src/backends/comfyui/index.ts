/** The `comfyui` backend kind: the operator's own ComfyUI servers running a workflow file per model. */
export { ComfyBackend, createComfyBackend } from './backend.js';
export { PLACEHOLDERS, loadWorkflow, fillWorkflow, type Workflow } from './workflow.js';
