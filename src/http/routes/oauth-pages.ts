import type { AuthorizeRequest } from '../../oauth/index.js';

/** The server-rendered pages of /oauth/authorize (the console will take them over; decision 2202). */

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const SCOPE_TEXT: Record<string, string> = {
  'tasks:read': 'see your tasks and their results',
  'tasks:write': 'create and cancel tasks (this spends your balance)',
  'files:write': 'upload files',
  'balance:read': 'see your balance',
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · GenGate</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:.1rem .3rem;word-break:break-all}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}</style>
</head><body><h1>${escape(title)}</h1>
${body}
</body></html>
`;
}

/** The consent form: the client's name, where the answer goes, the scopes; Allow and Deny post back with the session's CSRF token. */
export function consentPage(req: AuthorizeRequest, who: { email: string; accountName: string }, csrf: string): string {
  const hidden: Record<string, string> = {
    response_type: 'code',
    client_id: req.clientId,
    redirect_uri: req.redirectUri,
    code_challenge: req.codeChallenge,
    code_challenge_method: 'S256',
    scope: req.scopes.join(' '),
    resource: req.resource,
    csrf,
  };
  if (req.state !== null) hidden.state = req.state;
  const fields = Object.entries(hidden)
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${escape(v)}">`)
    .join('\n');
  const scopes = req.scopes.map((s) => `<li><code>${escape(s)}</code>: ${escape(SCOPE_TEXT[s] ?? s)}</li>`).join('\n');
  return page(
    'Allow access?',
    `<p><strong>${escape(req.clientName)}</strong> asks to use GenGate as <strong>${escape(who.email)}</strong> (account ${escape(who.accountName)}).</p>
<p>It will be able to:</p>
<ul>
${scopes}
</ul>
<p>After you answer, your browser goes to <code>${escape(req.redirectUri)}</code>.</p>
<p>You can revoke this access at any time (GET /api/v1/auth/oauth-grants).</p>
<form method="post" action="/oauth/authorize">
${fields}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** Not signed in as a member: a link to the console's sign-in, which comes back here. */
export function signInPage(back: string, why: string): string {
  return page(
    'Sign in to continue',
    `<p>${escape(why)}</p>
<p><a href="/signin?next=${escape(encodeURIComponent(back))}">Sign in</a> with your email and password, then come back to this page.</p>`,
  );
}

/** A request that cannot go back to the client (unknown client, unregistered redirect URI) or a refused form. */
export function errorPage(title: string, message: string): string {
  return page(title, `<p>${escape(message)}</p>`);
}
