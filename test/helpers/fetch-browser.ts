// A minimal "browser" over fetch for the interoperability tests: keeps cookies, fills the login and consent
// forms of a real listening server, and returns the URL the user would be sent back to.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { USER } from './app.js';
import { hiddenField } from './browser-flow.js';

/** A server on 127.0.0.1 with a random port whose handler is set once the address is known. */
export interface LateServer {
  readonly server: Server;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  setHandler(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** Listens first, so the issuer URL (with its port) can be given to the app that will answer. */
export async function listenLate(): Promise<LateServer> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else { res.statusCode = 503; res.end(); }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setHandler(h) { handler = h; },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A cookie jar for one host: enough for the session cookie of the login and consent pages. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** What the user does at the authorization server. */
export interface BrowseOptions {
  readonly decision?: 'allow' | 'deny';
  readonly username?: string;
  readonly password?: string;
}

/**
 * Opens an authorization URL (as built by a client library), signs in, answers the consent page, and returns
 * the redirect_uri URL with the authorization response. A remembered consent skips the consent page.
 */
export async function browseAuthorization(authorizationUrl: URL, options: BrowseOptions = {}): Promise<URL> {
  const jar = new CookieJar();
  const go = async (url: URL, form?: Record<string, string>): Promise<Response> => {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { Cookie: jar.header(), ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { method: 'POST', body: new URLSearchParams(form) } : {}),
    });
    jar.store(res);
    return res;
  };
  const formAction = (html: string, base: URL): URL => {
    const match = /<form method="post" action="([^"]+)"/.exec(html);
    if (!match) throw new Error('no form on the page');
    return new URL(match[1]!.replace(/&amp;/g, '&'), base);
  };

  const login = await go(authorizationUrl);
  const loginHtml = await login.text();
  expect(login.status, loginHtml).toBe(200);
  const posted = await go(formAction(loginHtml, authorizationUrl), {
    csrf_token: hiddenField(loginHtml, 'csrf_token'), request_id: hiddenField(loginHtml, 'request_id'),
    username: options.username ?? USER.username, password: options.password ?? USER.password,
  });
  expect(posted.status).toBe(303);
  const resumedUrl = new URL(posted.headers.get('location')!, authorizationUrl);
  const resumed = await go(resumedUrl);
  if (resumed.status === 302 && (options.decision ?? 'allow') === 'allow') return new URL(resumed.headers.get('location')!);
  const consentHtml = await resumed.text();
  expect(resumed.status, consentHtml).toBe(200);
  const decided = await go(formAction(consentHtml, resumedUrl), {
    csrf_token: hiddenField(consentHtml, 'csrf_token'), request_id: hiddenField(consentHtml, 'request_id'),
    decision: options.decision ?? 'allow',
  });
  expect(decided.status, 'a form POST is answered 303 (RFC 9700 §4.12.2)').toBe(303);
  return new URL(decided.headers.get('location')!);
}
