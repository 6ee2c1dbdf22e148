// The emitter a host listens on for audit events; a listener's failure never reaches the protocol.
import { EventEmitter } from 'node:events';
import type { OAuthEvent, OAuthEventOf, OAuthEventType } from './event-types.js';

/**
 * The listener arguments of each event name of OAuthEvents, the event map of its typed `EventEmitter`: one event of
 * that type per name, every event for `event`. A host names it to type a bridge (`EventEmitter<OAuthEventMap>`) or a
 * helper that binds `on`/`once`.
 * @see RFC 9700 §4.14 (audit of token issuance and use).
 */
export type OAuthEventMap = { [T in OAuthEventType]: [OAuthEventOf<T>] } & { event: [OAuthEvent] };

/** Where a listener's error is reported (`reportErrorsTo`; a `Logger` is one). */
export interface ErrorSink {
  error(message: string): void;
}

/**
 * Audit events of one authorization server (and of the admin API given it). Listen by type
 * (`events.on('token.issued', e => …)`) or to every event (`events.on('event', e => …)`, as a log writer
 * does). Listeners run synchronously, in the request that caused the event, after its outcome is settled:
 * keep them fast and hand slow work (a network call) to a queue. A listener that throws is reported to the
 * logger and skipped: an audit sink cannot fail a token request or issue one twice.
 * @see RFC 9700 §4.14, RFC 6819 §5.1.4.1.1 (events carry ids, never secrets).
 */
export class OAuthEvents extends EventEmitter<OAuthEventMap> {
  #sink: ErrorSink = console;

  /** Where listener errors are reported; `createOAuthRouter` points it at its `logger`. */
  reportErrorsTo(sink: ErrorSink): void {
    this.#sink = sink;
  }

  // Kept by the add/remove hooks so that `active`, read on every token request, allocates nothing.
  #listening = 0;

  constructor() {
    super();
    const counts = (name: string | symbol) => name !== 'newListener' && name !== 'removeListener';
    const untyped = this as EventEmitter;
    untyped.on('newListener', (name: string | symbol) => { if (counts(name)) this.#listening += 1; });
    untyped.on('removeListener', (name: string | symbol) => { if (counts(name)) this.#listening -= 1; });
  }

  /** True when anyone listens: emitters skip building events nobody reads. */
  get active(): boolean {
    return this.#listening > 0;
  }

  /** Delivers an event to the listeners of its type, then to the `event` listeners, each in isolation. */
  publish(event: OAuthEvent): void {
    this.#deliver(event.type, event);
    this.#deliver('event', event);
  }

  #deliver(name: OAuthEventType | 'event', event: OAuthEvent): void {
    // rawListeners keeps `once` wrappers, so calling them also removes them.
    for (const listener of this.rawListeners(name) as Array<(e: OAuthEvent) => void>) {
      try {
        listener.call(this, event);
      } catch (err) {
        this.#sink.error(`express-oauth-router: an audit event listener for ${event.type} failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
}
