import { usdText, type TopupAmounts } from './amounts.js';

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

/** What the top-up page needs to know: whether Stripe is on, the amounts, this server's address. */
export interface TopupPageFacts {
  enabled: boolean;
  amounts: TopupAmounts;
  publicBaseUrl: string;
}

/**
 * GET /topup: the top-up page (a plain server page until the console replaces it). With Stripe it
 * shows the amounts and how to start a Checkout with an API key; without, how to ask the operator.
 */
export function topupPage(facts: TopupPageFacts): string {
  if (!facts.enabled) {
    return page(
      'Top up your balance',
      `<p>Card payments are not enabled on this GenGate server.</p>
<p>To top up your balance, ask the operator of this server: they add credit to your account with
<code>gengate account topup &lt;account id&gt; --amount &lt;USD&gt;</code> or the admin API.</p>`,
    );
  }
  const { presets, min, max } = facts.amounts;
  const list = presets.map((p) => `<li>${escape(usdText(p))} USD</li>`).join('');
  const curl = `curl -X POST ${facts.publicBaseUrl}/api/v1/topups \\
  -H "Authorization: Bearer $GENGATE_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"amount": "${usdText(presets[0] ?? min)}"}'`;
  return page(
    'Top up your balance',
    `<p>Pay by card through Stripe Checkout. Suggested amounts:</p>
<ul>${list}</ul>
<p>Any amount in whole cents from ${escape(usdText(min))} to ${escape(usdText(max))} USD is accepted.</p>
<p>Start a payment with your API key; the answer's <code>checkoutUrl</code> is the payment page:</p>
<pre>${escape(curl)}</pre>
<p>Your balance is credited once Stripe confirms the payment, usually within seconds.</p>`,
  );
}

/** GET /topup/success: the payer is back from Checkout. It credits nothing: the signed webhook does. */
export function successPage(): string {
  return page(
    'Thank you',
    `<p>Your payment was received by Stripe. Your balance is credited as soon as Stripe confirms it to this server, usually within seconds.</p>
<p>Check it with <code>GET /api/v1/user/balance</code>.</p>`,
  );
}

/** GET /topup/cancel: the payer left Checkout without paying. */
export function cancelPage(topupUrl: string): string {
  return page('Payment cancelled', `<p>Nothing was charged. You can <a href="${escape(topupUrl)}">start again</a> at any time.</p>`);
}
