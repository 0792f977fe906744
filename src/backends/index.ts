/** Generation backends: the interface, the failure type, and the built-in local backend. */
export {
  BackendFailure,
  type Backend,
  type BackendJob,
  type BackendOutput,
  type BackendStatus,
  type CancelOutcome,
  type CreditReading,
  type UpstreamAccount,
  type FailKind,
  type OutputFile,
} from './types.js';
export { LocalBackend, type LocalOptions } from './local/backend.js';
export { NotAccepted } from './upstream/types.js';

/** The upstream adapters and what builds them, loaded on demand: only processes that run the engine pull in provider code. */
export async function loadUpstreams() {
  const [registry, kinds, upstream] = await Promise.all([import('./registry.js'), import('./kinds.js'), import('./upstream/http.js')]);
  return {
    buildRouteBackends: registry.buildRouteBackends,
    sweepUpstreamTmp: registry.sweepUpstreamTmp,
    BACKEND_KINDS_BUILT: kinds.BACKEND_KINDS_BUILT,
    UpstreamHttp: upstream.UpstreamHttp,
  };
}
