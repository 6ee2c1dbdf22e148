// The demo integration's redirect_uri: shows the authorization code and the curl that exchanges it.
import type { RequestHandler } from 'express';

/** What the page needs to print a ready-to-paste token request. */
export interface DemoCallbackOptions {
  /** {auth_url}: the token endpoint is `${authUrl}/oauth2/token`. */
  readonly authUrl: string;
  /**
   * The demo authorization_code integration, or `null` when it is not known (then a placeholder). A function is
   * asked on each request: the server registers the demo integrations only once it listens.
   */
  readonly clientId: string | null | (() => string | null);
  /** This page's own address, registered as the integration's redirect URI. */
  readonly redirectUri: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Single-quoted for POSIX shells: the only character to escape is the quote itself. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * GET /demo/callback. Stands in for the integration's own server, which would exchange the code itself
 * (RFC 6749 §4.1.2, §4.1.3). The client secret is never put on the page: it was printed once, at first
 * start, and the curl reads it from $CODE_CLIENT_SECRET.
 */
export function createDemoCallback(options: DemoCallbackOptions): RequestHandler {
  return function demoCallback(req, res) {
    const query = req.query as Record<string, unknown>;
    const text = (key: string): string | null => (typeof query[key] === 'string' ? (query[key] as string) : null);
    const code = text('code');
    const error = text('error');
    res.set('Cache-Control', 'no-store');
    res.set('Referrer-Policy', 'no-referrer');
    let body: string;
    if (code) {
      // Unknown id: left to the shell variable the first-start banner exported, so it must stay unquoted.
      const known = typeof options.clientId === 'function' ? options.clientId() : options.clientId;
      const clientId = known ? shellQuote(known) : '"$CODE_CLIENT_ID"';
      const curl = [
        `curl -s -u ${clientId}:"$CODE_CLIENT_SECRET" \\`,
        `  -d grant_type=authorization_code -d client_id=${clientId} \\`,
        `  --data-urlencode redirect_uri=${shellQuote(options.redirectUri)} \\`,
        `  --data-urlencode code=${shellQuote(code)} \\`,
        `  ${shellQuote(`${options.authUrl}/oauth2/token`)}`,
      ].join('\n');
      body = `<h1>Authorization code received</h1>
<p>Code: <code>${escapeHtml(code)}</code>${text('state') ? ` &middot; state: <code>${escapeHtml(text('state') ?? '')}</code>` : ''}</p>
<p>Exchange it within a minute (it works once), with the secret printed at first start in <code>$CODE_CLIENT_SECRET</code>:</p>
<pre>${escapeHtml(curl)}</pre>`;
    } else if (error) {
      body = `<h1>Authorization refused</h1><p>error: <code>${escapeHtml(error)}</code></p>
<p>${escapeHtml(text('error_description') ?? '')}</p>`;
    } else {
      body = '<h1>Nothing to show</h1><p>This page receives the redirect from the authorization endpoint.</p>';
      res.status(400);
    }
    // Phone-sized screens: the viewport follows the device, and codes, states and the curl's long lines wrap
    // anywhere rather than widening the page (nothing here has spaces to break at).
    res.type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme Sign demo callback</title>
<style>body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;overflow-wrap:anywhere}
code,pre{overflow-wrap:anywhere;word-break:break-word}pre{background:#f4f4f4;padding:1rem;white-space:pre-wrap;max-width:100%;box-sizing:border-box}</style>
</head><body><main>${body}</main></body></html>`);
  };
}
