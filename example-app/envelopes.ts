// The signature API of the example app: envelopes and "who am I", all behind requireBearer.
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Router } from 'express';
import type { BearerAuth, OAuthRouter, Store } from 'express-oauth-router';
import { apiSecurityHeaders } from './api-headers.js';
import { checkTitle } from './check-title.js';

/** An envelope as the API returns it (snake_case on the wire). */
export interface Envelope {
  readonly id: string;
  readonly title: string;
  readonly status: 'draft';
  readonly created_at: string;
}

/** What the envelope routes need. */
export interface EnvelopesRouterOptions {
  readonly oauth: OAuthRouter;
  /** To name the integration in GET /me. */
  readonly store: Store;
}

// A demo keeps everything in memory; the cap keeps one integration from filling it.
const MAX_ENVELOPES = 1000;

function authOf(req: Request): BearerAuth {
  // requireBearer runs before every route here; without req.auth the request never reaches them.
  if (!req.auth) throw new Error('requireBearer did not run');
  return req.auth;
}

/** Envelopes belong to the integration and, for authorization_code tokens, the user who granted it. */
function ownerKey(auth: BearerAuth): string {
  return JSON.stringify([auth.clientId, auth.userId]);
}

/** What a body-parser refusal says, by its status: the one thing about the body to change. */
const BODY_ERRORS: Readonly<Record<number, string>> = {
  400: 'the body must be a JSON object',
  413: 'the body must be at most 16 kB',
  415: 'the body must be JSON in UTF-8, with no Content-Encoding other than gzip, deflate or br',
};

/** The body-parser error `type` of a JSON body that is not valid UTF-8 (set by the `verify` below). */
const NOT_UTF8 = 'entity.verify.not_utf8';

function badRequest(description: string): { error: string; error_description: string } {
  return { error: 'invalid_request', error_description: description };
}

/**
 * GET/POST /envelopes (scopes envelopes:read / envelopes:write) and GET /me, for mounting at /api/v1. Every route requires a bearer token
 * (RFC 6750); tokens from both base addresses ({auth_url} and {legacy_auth_url}) are accepted.
 */
export function createEnvelopesRouter(options: EnvelopesRouterOptions): Router {
  const envelopes = new Map<string, Envelope[]>();
  const router = express.Router();
  // Not helmet(): its page-oriented defaults cost more than the bearer check on every API call (api-headers.ts).
  router.use(apiSecurityHeaders());
  // Each route names the scope it needs (403 insufficient_scope otherwise); the token is checked before
  // any body is parsed. A token of an integration registered without scopes (SPEC's) is all-access and passes.
  const canRead = options.oauth.requireBearer({ scope: 'envelopes:read' });
  const canWrite = options.oauth.requireBearer({ scope: 'envelopes:write' });
  // RFC 8259 §8.1: JSON between systems is UTF-8. body-parser decodes invalid octets to U+FFFD without a word, which
  // would store a title the client never sent: refuse the body instead (400, not body-parser's 403 for verify).
  const jsonBody = express.json({
    limit: '16kb',
    verify: (_req, _res, buffer) => {
      if (!isUtf8(buffer)) throw Object.assign(new Error('body is not valid UTF-8'), { status: 400, type: NOT_UTF8 });
    },
  });

  router.get('/envelopes', canRead, (req, res) => {
    res.json({ envelopes: envelopes.get(ownerKey(authOf(req))) ?? [] });
  });

  // The envelope a 201's Location names (RFC 9110 §15.3.2). Looked up among the caller's own only: another
  // owner's id is 404 like an unknown one, so an id tells nothing about envelopes the token may not see.
  router.get('/envelopes/:id', canRead, (req, res) => {
    const envelope = envelopes.get(ownerKey(authOf(req)))?.find((e) => e.id === req.params['id']);
    if (!envelope) {
      res.status(404).json({ error: 'not_found', error_description: 'no envelope of this integration has that id' });
      return;
    }
    res.json(envelope);
  });

  // Token first (403 before a body is read), then the media type: a JSON body sent as text/plain or a form is
  // 415 (RFC 9110 §15.5.16), not a "title" error. No body at all falls through to the title check.
  const requireJson: RequestHandler = (req, res, next) => {
    if (req.is('application/json') === false) {
      res.status(415).json(badRequest('the body must be application/json'));
      return;
    }
    next();
  };

  router.post('/envelopes', canWrite, requireJson, jsonBody, (req, res) => {
    const checked = checkTitle((req.body as Record<string, unknown> | undefined)?.['title']);
    if ('refused' in checked) {
      res.status(400).json(badRequest(checked.refused));
      return;
    }
    const { title } = checked;
    const key = ownerKey(authOf(req));
    const list = envelopes.get(key) ?? [];
    if (list.length >= MAX_ENVELOPES) {
      res.status(409).json({ error: 'limit_reached', error_description: `this demo keeps at most ${MAX_ENVELOPES} envelopes` });
      return;
    }
    const envelope: Envelope = { id: randomUUID(), title, status: 'draft', created_at: new Date().toISOString() };
    envelopes.set(key, [...list, envelope]);
    res.status(201).location(`${req.baseUrl}/envelopes/${envelope.id}`).json(envelope);
  });

  router.get('/me', options.oauth.requireBearer(), async (req, res) => {
    const auth = authOf(req);
    const client = await options.store.clients.findClient(auth.clientId);
    res.json({
      client_id: auth.clientId,
      client_name: client?.name ?? null,
      user_id: auth.userId,
      scope: auth.scope.join(' '),
      // An empty scope alone would read as "no permission": say that the token may do everything.
      all_access: auth.allAccess,
      issuer: auth.issuer,
      expires_at: auth.expiresAt.toISOString(),
    });
  });

  // Every other method on these paths, and every other path under /api/v1: JSON like the rest of the API, not
  // Express's HTML page; 405 names the methods there are (RFC 9110 §15.5.6), which OPTIONS lists too (§9.3.7).
  for (const [path, methods] of [['/envelopes', 'GET, HEAD, POST'], ['/envelopes/:id', 'GET, HEAD'], ['/me', 'GET, HEAD']] as const) {
    const allow = `${methods}, OPTIONS`;
    router.all(path, (req, res) => {
      res.set('Allow', allow);
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
      res.status(405).json({ error: 'method_not_allowed', error_description: `this route allows ${allow}` });
    });
  }
  router.use((_req, res) => {
    res.status(404).json({ error: 'not_found', error_description: 'no such API route' });
  });

  const onError: ErrorRequestHandler = (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    // Express's router could not decode a path parameter (`/envelopes/%ZZ`): it fails before any route, so
    // before the token check too, with a URIError of status 400. Say what is wrong with the path, not the body.
    if (error instanceof URIError) {
      res.status(400).json(badRequest('the path is not valid percent-encoding (RFC 3986 section 2.1)'));
      return;
    }
    // body-parser errors carry a 4xx status and are safe to describe; anything else stays internal.
    const { status, type } = error as { status?: unknown; type?: unknown };
    if (type === NOT_UTF8) {
      res.status(400).json(badRequest('the body must be valid UTF-8'));
      return;
    }
    // A body that does not inflate as its Content-Encoding says: zlib's error (Z_DATA_ERROR, Z_BUF_ERROR,
    // ERR__ERROR_FORMAT_PADDING_1 for br…) comes through body-parser as a 400 with no type of its own.
    const code = (error as { code?: unknown }).code;
    if (status === 400 && type === undefined && typeof code === 'string' && /^(Z_|ERR_)/.test(code)) {
      res.status(400).json(badRequest('the body is not encoded as its Content-Encoding says'));
      return;
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json(badRequest(BODY_ERRORS[status] ?? BODY_ERRORS[400]!));
      return;
    }
    // A store outage while looking up the client (after requireBearer succeeded) is transient: 503, not 500.
    if (error instanceof Error && error.name === 'StoreUnavailableError') {
      res.status(503).json({ error: 'temporarily_unavailable', error_description: 'the service is temporarily unavailable' });
      return;
    }
    res.status(500).json({ error: 'server_error', error_description: 'internal server error' });
  };
  router.use(onError);
  return router;
}
