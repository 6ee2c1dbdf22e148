// Limits failed sign-ins per client IP (express-rate-limit), so passwords cannot be guessed at speed.
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store as RateLimitStore } from 'express-rate-limit';
import { OptionsError } from '../options-error.js';

/** The `loginRateLimit` option. */
export interface LoginRateLimitOptions {
  /** Failed sign-ins allowed per IP and window. Default 10. */
  readonly max?: number;
  /** Window length. Default 900 (15 minutes). */
  readonly windowSeconds?: number;
  /** Where counts live; default in process memory (per instance). */
  readonly store?: RateLimitStore;
}

/** The option after defaults. */
export interface ResolvedLoginRateLimit {
  readonly max: number;
  readonly windowSeconds: number;
  readonly store: RateLimitStore | undefined;
}

function positive(key: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new OptionsError(`loginRateLimit.${key}`, 'must be a positive integer');
  }
  return value;
}

/**
 * Validates the option once, at start-up.
 * @throws OptionsError naming the bad key.
 */
export function resolveLoginRateLimit(value: LoginRateLimitOptions | false | undefined): ResolvedLoginRateLimit | null {
  if (value === false) return null;
  const options = value ?? {};
  if (typeof options !== 'object' || options === null) throw new OptionsError('loginRateLimit', 'must be an object or false');
  return { max: positive('max', options.max, 10), windowSeconds: positive('windowSeconds', options.windowSeconds, 900), store: options.store };
}

/**
 * Counts only failed attempts (a successful sign-in answers 303, a failed one 401), keyed by client IP
 * (`req.ip`: behind a proxy the host sets Express's `trust proxy`). Over the limit, `onLimited` answers (429
 * with `Retry-After`, set by express-rate-limit).
 * @see RFC 6819 §4.4.3.6 (online guessing of resource owner passwords), RFC 6585 §4 (429).
 */
export function createLoginRateLimit(
  resolved: ResolvedLoginRateLimit,
  onLimited: (req: Request, res: Response) => void,
): RequestHandler {
  return rateLimit({
    windowMs: resolved.windowSeconds * 1000,
    limit: resolved.max,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode < 400,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    ...(resolved.store ? { store: resolved.store } : {}),
    handler: (req, res) => onLimited(req, res),
  });
}
