// DESIGN §5 "No timing in protocol logic": no sleep, timer or second pass decides what a request may do.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
/** The protocol code: what decides who gets a token. Stores keep their housekeeping timers (sweeps, connects). */
const PROTOCOL = ['grants', 'endpoints', 'consents', 'clients', 'checks', 'middleware', 'http', 'jwt', 'crypto'];
const TIMING = /\b(setTimeout|setInterval|setImmediate)\s*\(|timers\/promises|\bdelay\s*\(|\bsleep\s*\(/;
/**
 * The exceptions, and why: deadlines on I/O, not protocol logic. A request body's read deadline ends a socket read
 * that stalls (answered 408); the UserAuth hooks' deadline ends a wait on the host's user directory that never
 * answers (answered 503, as the outage it is, and its late answer is ignored); the read-off of a body already refused
 * (413, 415) ends a wait for its rest, after which the refusal goes out anyway; the bcrypt worker's watchdog ends a
 * worker thread that answers none of its checks for 10 s (answered 500, as the crash it is), its setImmediate letting
 * answers that came in while the event loop was held up be read before it judges; the page language's deadline ends a
 * wait on an asynchronous `pageLanguages.choose` (a profile store that never answers), after which the page is
 * negotiated from Accept-Language. None decides who gets a token: each
 * can only refuse a request that would otherwise hang until Node's requestTimeout (5 minutes), or for ever (a hung
 * thread), or bound how long a refusal waits. Only these files, and only these calls.
 */
const IO_DEADLINES = new Map([
  ['http/body-deadline.ts', ['setTimeout']],
  ['http/bounded-user-auth.ts', ['setTimeout']],
  ['http/drain-refused-body.ts', ['setTimeout']],
  ['crypto/bcrypt-secret.ts', ['setTimeout', 'setImmediate']],
  ['http/page-language-for.ts', ['setTimeout']],
]);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []);
}

describe('protocol logic does not depend on timing', () => {
  it('no file of the protocol code uses a timer, a sleep or timers/promises', () => {
    const offenders = PROTOCOL.flatMap((dir) => files(join(SRC, dir)))
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        const allowed = IO_DEADLINES.get(file.slice(SRC.length + 1));
        if (allowed === undefined) return TIMING.test(text);
        const timers = (text.match(new RegExp(TIMING.source, 'g')) ?? []).map((found) => found.replace(/\s*\($/, ''));
        return timers.length !== allowed.length || timers.some((found, i) => found !== allowed[i]);
      })
      .map((file) => file.slice(SRC.length + 1));
    expect(offenders).toEqual([]);
  });
});
