// A browser for the session tests: one cookie jar over supertest, whose cookies a test may read or plant.
import request from 'supertest';
import type express from 'express';

/** A response as the tests read it. */
export type PageResponse = request.Response;

/**
 * Keeps every cookie the server sets (name → value) and sends them back, ignoring Max-Age and Expires on
 * purpose: a stolen or kept cookie is replayed as is, so an expiry is proved by the server, not the jar.
 */
export class CookieBrowser {
  readonly cookies = new Map<string, string>();

  /** `headers` go with every request (e.g. `X-Forwarded-Proto: https` for a TLS-terminating proxy). */
  constructor(private readonly app: express.Express, private readonly headers: Record<string, string> = {}) {}

  /** Copies every cookie of `other` into this browser (a cookie planted by an attacker). */
  plantCookiesOf(other: CookieBrowser): void {
    for (const [name, value] of other.cookies) this.cookies.set(name, value);
  }

  async get(path: string): Promise<PageResponse> {
    return this.keep(await request(this.app).get(path).set(this.headers).set('Cookie', this.header()));
  }

  async post(path: string, form: Record<string, string>): Promise<PageResponse> {
    return this.keep(await request(this.app).post(path).set(this.headers).set('Cookie', this.header()).type('form').send(form));
  }

  private header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(res: PageResponse): PageResponse {
    const raw = res.headers['set-cookie'] as unknown;
    for (const line of Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : []) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      // A cookie the server clears (Max-Age=0 or an Expires in the past) is dropped, as a browser would.
      const cleared = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (cleared || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}
