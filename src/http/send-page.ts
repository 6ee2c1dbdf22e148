// Sends an HTML page with a strict per-response Content-Security-Policy and no caching.
import type { Response } from 'express';
import { answeredByHost } from './answered-by-host.js';
import { randomBytes } from 'node:crypto';
import { renderPage } from '../views/layout.js';
import type { PageLanguage } from '../views/page-languages.js';

/** A page to send. */
export interface PageResponse {
  readonly status: number;
  readonly title: string;
  readonly productName: string;
  readonly brandColor: string;
  /** The page's main content, every dynamic value already escaped. */
  readonly body: string;
  /** Origins a form on this page may end up at: the consent form redirects to the client (CSP form-action
   * applies to redirects after a form submission). */
  readonly formTargets?: readonly string[];
  /**
   * The page's language; `negotiated` when the host gave `pageLanguages`, so the page depends on the request's
   * Accept-Language (and `choose`) and says so. Default: English, without those headers, as before.
   */
  readonly language?: Pick<PageLanguage, 'tag' | 'dir' | 'negotiated'>;
}

/**
 * Writes the page, with no ETag (no cache may keep it). No script runs on these pages, so `default-src 'none'`; the one stylesheet is inline with
 * a nonce, so no external asset is needed; framing is refused (clickjacking, RFC 6749 §10.13). A page in a negotiated
 * language names it (Content-Language) and what chose it (Vary: Accept-Language), so no cache serves it to another.
 * @see RFC 6749 §10.13, RFC 6819 §4.4.1.9, RFC 9110 §8.5 (Content-Language), §12.5.5 (Vary), RFC 9111 §5.2.2.5 (no-store).
 */
export function sendPage(res: Response, page: PageResponse): void {
  // A host middleware answered already, or is answering (connect-timeout's 503 for a slow form): see answeredByHost.
  if (answeredByHost(res)) return;
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(page.formTargets ?? [])].join(' ');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  const language = page.language;
  if (language?.negotiated) {
    res.setHeader('Content-Language', language.tag);
    res.vary('Accept-Language');
  }
  const html = renderPage({
    title: page.title, productName: page.productName, brandColor: page.brandColor, nonce, body: page.body,
    ...(language ? { lang: language.tag, dir: language.dir } : {}),
  });
  // Written as is, not through res.send: that adds an ETag (a hash of every page, which no cache may keep: no-store,
  // and a new nonce each time) and would answer a matching If-None-Match 304 without the page.
  res.setHeader('Content-Length', Buffer.byteLength(html, 'utf8'));
  res.statusCode = page.status;
  res.end(html, 'utf8');
}
