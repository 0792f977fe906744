/**
 * What the start-up log says about private addresses (issue 36, decision 2502): a warning when
 * ALLOW_PRIVATE_NETWORK is on, naming everything it opens, and the trusted upstream hosts
 * otherwise (informational). Null when nothing private is reachable.
 */
export function privateNetworkNotice(allowPrivate: boolean, privateHosts: readonly string[]): { level: 'warn' | 'info'; msg: string } | null {
  if (allowPrivate) {
    return {
      level: 'warn',
      msg:
        "ALLOW_PRIVATE_NETWORK=true: every outbound request may reach loopback, private, link-local and cloud metadata addresses (e.g. 169.254.169.254): customers' callBackUrls, the photo and media links of their tasks, upload-by-link, account webhooks and every upstream route. " +
        'Use it for development and tests only; to reach upstreams on a private network (a ComfyUI on the LAN), set `private_network: true` on their routes or UPSTREAM_PRIVATE_HOSTS and turn ALLOW_PRIVATE_NETWORK off (docs/backends.md).',
    };
  }
  if (privateHosts.length === 0) return null;
  return {
    level: 'info',
    msg: `upstream calls may reach private addresses of these trusted hosts only: ${privateHosts.join(', ')} (route private_network, UPSTREAM_PRIVATE_HOSTS); customers' links stay guarded`,
  };
}
