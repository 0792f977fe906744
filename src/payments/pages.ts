const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · GenGate</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}code,pre{background:#f3f3f3;padding:.1rem .3rem}pre{padding:.6rem;overflow-x:auto}</style>
</head><body><h1>${escape(title)}</h1>
${body}
</body></html>
`;
}

/** GET /topup/success: the payer is back from Checkout. It credits nothing: the signed webhook does. */
export function successPage(): string {
  return page(
    'Thank you',
    `<p>Your payment was received by Stripe. Your balance is credited as soon as Stripe confirms it to this server, usually within seconds.</p>
<p>See it on the <a href="/">console's home page</a> or with <code>GET /api/v1/user/balance</code>.</p>`,
  );
}

/** GET /topup/cancel: the payer left Checkout without paying. */
export function cancelPage(topupUrl: string): string {
  return page('Payment cancelled', `<p>Nothing was charged. You can <a href="${escape(topupUrl)}">start again</a> at any time.</p>`);
}
