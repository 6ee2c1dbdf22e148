// Structured logging of the example app: pino JSON lines for the router's messages and for every audit event.
import { pino, type Logger as Pino } from 'pino';
import { describeStoreError, type Logger, type OAuthEvents, type StoreWarningLogger } from 'express-oauth-router';

/**
 * The app's logger: one JSON object per line on stdout, ISO times. Nothing here logs requests: a request line
 * would carry the demo callback's `?code=…`, and audit events already say who did what.
 */
export function createAppLogger(): Pino {
  return pino({ base: { service: 'acme-sign' }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** The router's `logger` option (operational messages; the package never passes it a secret) over pino. */
export function routerLogger(log: Pino): Logger {
  const oauthLog = log.child({ component: 'oauth' });
  return {
    warn: (message) => oauthLog.warn(message),
    error: (message) => oauthLog.error(message),
  };
}

/**
 * The stores' `logger` (OAuth store and session store) over pino: one line per connection loss or background
 * failure, `"component":"store"`, with the driver error's message and code only. The error object itself
 * would put node-postgres's connection (its cancel `secretKey` too) into the log.
 */
export function storeLogger(log: Pino): StoreWarningLogger {
  const storeLog = log.child({ component: 'store' });
  return {
    warn: (message, error) => storeLog.warn(error === undefined ? {} : { error: describeStoreError(error) }, message),
  };
}

/**
 * Writes every audit event as one line: `{"level":30,"time":…,"audit":true,"event":"token.issued",
 * "clientId":…,"msg":"token.issued"}`. Events hold ids only (never a secret, code or token), so each is
 * written as it is; its `time` is the line's own (listeners run when the event happens).
 * @see RFC 9700 §4.14, RFC 6819 §5.1.4.1.1.
 */
export function logAuditEvents(events: OAuthEvents, log: Pino): void {
  const audit = log.child({ audit: true });
  events.on('event', (event) => {
    const { type, time: _time, ...fields } = event;
    audit.info({ event: type, ...fields }, type);
  });
}
