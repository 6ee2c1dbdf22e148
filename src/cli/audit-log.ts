// The oauth-admin audit trail: OAUTH_AUDIT_LOG names a file that gets one JSON line per admin event.
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { OAuthEvents } from '../events/oauth-events.js';
import type { OAuthEvent } from '../events/event-types.js';
import { CliError, EXIT_FAILURE } from './cli-error.js';
import { writeWarning } from './json-warnings.js';

/** pino's level number for `info`, so the lines sit among the example app's audit lines unchanged. */
const INFO = 30;

/**
 * One event as the example app's audit log writes it (pino, `example-app/audit-log.ts`):
 * `{"level":30,"time":…,"service":"oauth-admin","audit":true,"event":"client.disabled","issuer":null,"ip":null,
 * "clientId":…,"msg":"client.disabled"}`. Events hold ids only (never a secret, code or token), so each is
 * written as it is. Its `time` is when the change was made.
 * @see RFC 9700 §4.14, RFC 6819 §5.1.4.1.1 (no secrets in logs).
 */
export function auditLine(event: OAuthEvent): string {
  const { type, time, ...fields } = event;
  return `${JSON.stringify({ level: INFO, time: time.toISOString(), service: 'oauth-admin', audit: true, event: type, ...fields, msg: type })}\n`;
}

/**
 * Runs `work` with the events the admin API should publish to: with `OAUTH_AUDIT_LOG` set, an emitter whose
 * every event is appended to that file as one `auditLine`; without it, none (and nothing is written anywhere:
 * scripts parse stdout and stderr). The file is opened before `work` runs, so a path that cannot be written
 * fails the command before anything changes, and with O_APPEND: each line is one write at the end of the file,
 * so the CLI runs and an app writing the same file never overwrite or split each other's lines. Created 0600.
 * A line that cannot be written after the change is reported on stderr (the change itself stands).
 * @throws CliError (exit 1, `failure`) when the file cannot be opened.
 * @see README "oauth-admin" (what the CLI records and where).
 */
export async function withAuditLog<T>(work: (events: OAuthEvents | undefined) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const path = env['OAUTH_AUDIT_LOG']?.trim();
  if (!path) return work(undefined);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new CliError(`cannot open OAUTH_AUDIT_LOG ${path} for appending (${code}); nothing was changed`, EXIT_FAILURE);
  }
  const events = new OAuthEvents();
  // The change stands (exit 0: a script retrying a create would make a second integration), so this is a warning,
  // in the stderr format the command was asked for.
  events.reportErrorsTo({
    error: (message) => writeWarning('audit_log_write_failed', `could not write to OAUTH_AUDIT_LOG ${path}: ${message}; the change was made but is not in the audit trail`),
  });
  events.on('event', (event) => {
    writeSync(fd, auditLine(event));
  });
  try {
    return await work(events);
  } finally {
    closeSync(fd);
  }
}
