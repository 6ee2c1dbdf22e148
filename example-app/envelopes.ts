// The signature API of the example app: envelopes and "who am I", all behind requireBearer.
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type Router } from 'express';
import type { BearerAuth, OAuthRouter, Store } from 'express-oauth-router';
import { apiSecurityHeaders } from './api-headers.js';

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

const MAX_TITLE = 200;
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
  const jsonBody = express.json({ limit: '16kb' });

  router.get('/envelopes', canRead, (req, res) => {
    res.json({ envelopes: envelopes.get(ownerKey(authOf(req))) ?? [] });
  });

  router.post('/envelopes', canWrite, jsonBody, (req, res) => {
    const title: unknown = (req.body as Record<string, unknown> | undefined)?.['title'];
    if (typeof title !== 'string' || title.trim().length === 0 || title.length > MAX_TITLE) {
      res.status(400).json(badRequest(`title must be a non-empty string of at most ${MAX_TITLE} characters`));
      return;
    }
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

  const onError: ErrorRequestHandler = (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    // body-parser errors carry a 4xx status and are safe to describe; anything else stays internal.
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json(badRequest('the body must be JSON of at most 16 kB'));
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
