// A browser reduced to what the page tests need: fetch with one cookie jar, redirects left to the test, forms posted same-origin.

/** GETs `path`, or POSTs `form` as a same-origin form, keeping every cookie the answers set. */
export type FetchBrowser = (path: string, form?: Record<string, string>) => Promise<Response>;

/**
 * A cookie jar over fetch against `origin`. `headers` go on every request (a proxy's `Host` and `X-Forwarded-Proto`,
 * say). Cookies are kept by name only, as one host's are: the tests that use it talk to one origin.
 */
export function createFetchBrowser(origin: string, headers: Record<string, string> = {}): FetchBrowser {
  const cookies = new Map<string, string>();
  return async (path, form) => {
    const res = await fetch(`${origin}${path}`, {
      redirect: 'manual',
      headers: {
        ...headers,
        Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' } : {}),
      },
      ...(form ? { method: 'POST', body: new URLSearchParams(form) } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
    }
    return res;
  };
}
