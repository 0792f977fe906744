/** Generation backends: the interface, the failure type, and the built-in local backend. */
export { BackendFailure, type Backend, type BackendJob, type BackendOutput, type BackendStatus, type FailKind, type OutputFile } from './types.js';
export { LocalBackend, type LocalOptions } from './local/backend.js';
