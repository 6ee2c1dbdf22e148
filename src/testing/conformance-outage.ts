// The outage rule: a failing backend rejects with StoreUnavailableError, and the same store recovers after.
import assert from 'node:assert/strict';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';
import type { ConformanceRule, SimulateOutage } from './conformance-types.js';
import type { RevocationFeed, RevocationMark, Store } from '../stores/contract.js';
import { buildCode, buildTokenPair, saveTokens } from './conformance-fixtures.js';
import { everyMethodCall, type MethodCall } from './every-method-call.js';
import { isCallDeadlineError } from './call-deadline.js';

/** The name the runners give the rule when the hook is missing. @see RFC 6749 §5.2 (`temporarily_unavailable`) */
export const OUTAGE_SKIPPED_NAME =
  'outage: SKIPPED — supply simulateOutage to check that a failing backend rejects with StoreUnavailableError';

/** Why the rule is skipped, for reports and the warning. @see RFC 9110 §15.6.4 (503) */
export const OUTAGE_SKIPPED_REASON =
  'no simulateOutage hook: nothing checks that a failing backend rejects with StoreUnavailableError (which the router ' +
  'answers with 503 temporarily_unavailable) rather than a raw driver error (which it answers with 500)';

/**
 * How long after the outage's end function resolves a call may still fail (each failure a StoreUnavailableError):
 * a store reconnects by itself, on its driver's schedule (a backoff of a few hundred ms is usual), and is retried
 * every RECOVERY_PAUSE_MS meanwhile.
 */
const RECOVERY_MS = 5_000;
const RECOVERY_PAUSE_MS = 25;

/** Describes what a call did instead of rejecting with a StoreUnavailableError. */
function wrongOutcome(result: PromiseSettledResult<unknown>): string | null {
  if (result.status === 'fulfilled') return 'resolved as if the backend were there';
  if (isStoreUnavailableError(result.reason)) return null;
  if (isCallDeadlineError(result.reason)) return `did not settle within ${result.reason.ms} ms (callTimeoutMs)`;
  const err = result.reason as { name?: unknown; code?: unknown; message?: unknown } | null;
  return `rejected with ${String(err?.name ?? typeof err)}${err?.code ? ` (${String(err.code)})` : ''}: ${String(err?.message ?? err)}`;
}

/** Runs `call` until it succeeds; each failure before must be a StoreUnavailableError, for at most RECOVERY_MS. */
async function once<T>(what: string, call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RECOVERY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isStoreUnavailableError(err)) {
        throw new Error(`after the outage ended, ${what} failed with an error that is no StoreUnavailableError (attempt ${attempt}): ${String(err)}`, { cause: err });
      }
      if (Date.now() >= deadline) {
        throw new Error(`after the outage ended, ${what} still failed ${RECOVERY_MS / 1000} s later (attempt ${attempt}): ${String(err)}. `
          + 'The same store object must reconnect by itself once the backend is back (the suite does not recreate it)', { cause: err });
      }
      await new Promise<void>((resolve) => setTimeout(resolve, RECOVERY_PAUSE_MS));
    }
  }
}

/**
 * The outage rule (needs `simulateOutage`). While the backend is out, every method the store has rejects
 * with an error that `isStoreUnavailableError` recognises, so the router answers 503 and the host can
 * retry, instead of a raw driver error and a 500. Once the outage ends, the same store object serves
 * again without being recreated, what it held before the outage is still there, and no save that failed during it
 * left a token behind (all or nothing, each form of `saveTokens` included).
 * @see RFC 6749 §4.1.2.1, §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4 (503 Service Unavailable).
 */
export const outageRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    needsOutageHook: true,
    name: 'outage: while the backend is out every method rejects with StoreUnavailableError, and once it is back the same store serves again',
    async run({ store, simulateOutage, withPeer, outageSparesPeer }) {
      assert.ok(simulateOutage, 'the outage rule needs simulateOutage');
      const feed = typeof store.revocations?.mark === 'function' ? store.revocations : null;
      // With a feed and a peer the hook spares, the gap is checked too: a revocation made through the peer meanwhile.
      if (feed && withPeer && outageSparesPeer) await withPeer((peer) => outageWith(store, simulateOutage, { feed, peer }));
      else await outageWith(store, simulateOutage, null);
    },
  },
];

/**
 * What the `saveTokens` entries left behind: the outage was in effect before they started, so each failed and none
 * may have saved anything. A token found afterwards was written by a save that reported failure: its access token
 * without its refresh token, or before the grant's own write failed (a save split over statements, no transaction).
 * @see RFC 6749 §5.2 (`temporarily_unavailable`: the client got no token), §10.4 (a refresh token bound to its grant).
 */
async function leftBehind(store: Store, calls: readonly MethodCall[]): Promise<string[]> {
  const found: string[] = [];
  for (const [name, , saves] of calls) {
    if (!saves) continue;
    const access = (await store.tokens.findAccessToken(saves.access.tokenHash)) !== null;
    const refresh = saves.refresh !== null && (await store.tokens.findRefreshToken(saves.refresh.tokenHash)) !== null;
    if (!access && !refresh) continue;
    const what = [access ? 'its access token' : '', refresh ? 'its refresh token' : ''].filter(Boolean).join(' and ');
    const missing = saves.refresh !== null && access !== refresh ? ` (without ${access ? 'its refresh token' : 'its access token'}: half a pair)` : '';
    found.push(`store.${name} failed, yet ${what} can be found${missing}`);
  }
  return found;
}

/** A mark the feed answers within RECOVERY_MS, or null if it answers none (which trusts no cache: allowed). */
async function settledMark(feed: RevocationFeed): Promise<RevocationMark> {
  const deadline = Date.now() + RECOVERY_MS;
  let mark = feed.mark();
  while (mark === null && Date.now() < deadline) {
    await new Promise<void>((resolve) => setTimeout(resolve, RECOVERY_PAUSE_MS));
    mark = feed.mark();
  }
  return mark;
}

/**
 * The outage rule's body. With `gap`, a grant is also revoked through the peer while this store is out (when the
 * peer still reaches the backend): this store's feed, which heard nothing of it, must not answer after the outage a
 * mark it gave before, or a token cached before the gap would be trusted although revoked.
 */
async function outageWith(store: Store, simulateOutage: SimulateOutage, gap: { feed: RevocationFeed; peer: Store } | null): Promise<void> {
  const before = buildTokenPair();
  const code = buildCode();
  assert.equal(await saveTokens(store, before.access, before.refresh), true);
  await store.codes.saveCode(code);
  const revoked = buildTokenPair();
  assert.equal(await saveTokens(store, revoked.access, revoked.refresh), true);
  const markBefore = gap ? await settledMark(gap.feed) : null;
  let peerRevoked = false;
  const endOutage = await simulateOutage(store);
  let outcomes: PromiseSettledResult<unknown>[];
  const calls = everyMethodCall(store);
  try {
    // All at once: a store that waits for a timeout per call must not make the rule wait for each in turn.
    outcomes = await Promise.allSettled(calls.map(([, call]) => Promise.resolve().then(call)));
    if (gap && markBefore !== null) {
      await gap.peer.tokens.revokeGrant(revoked.access.grantId).catch((err: unknown) => {
        throw new Error('outageSparesPeer is set, but the peer could not revoke during the outage: ' + String(err), { cause: err });
      });
      peerRevoked = true;
    }
  } finally {
    await endOutage();
  }
  const wrong = calls.flatMap(([name], i) => {
    const problem = wrongOutcome(outcomes[i]!);
    return problem ? [`store.${name} ${problem}`] : [];
  });
  // One list in the message, not a diff of it against [] as well.
  assert.ok(wrong.length === 0, `during the outage, every method must reject with StoreUnavailableError:\n${wrong.join('\n')}`);
  assert.deepEqual(await once('findAccessToken', () => store.tokens.findAccessToken(before.access.tokenHash)), before.access);
  const halfSaved = await leftBehind(store, calls);
  assert.ok(halfSaved.length === 0, 'a saveTokens that failed during the outage must have saved nothing (a save is all or nothing), '
    + `yet after the outage:\n${halfSaved.join('\n')}`);
  assert.deepEqual(await store.tokens.findRefreshToken(before.refresh.tokenHash), before.refresh);
  assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code });
  const after = buildTokenPair();
  assert.equal(await saveTokens(store, after.access, after.refresh), true);
  assert.deepEqual(await store.tokens.findAccessToken(after.access.tokenHash), after.access);
  if (gap && peerRevoked) {
    const markAfter = await settledMark(gap.feed);
    assert.ok(
      markAfter === null || markAfter !== markBefore,
      'after an outage in which another instance revoked a grant, revocations.mark() answered the mark it gave before the '
        + 'outage: a token cached before the gap would still be served although revoked. Answer null from the moment the '
        + "feed's connection drops until it listens again, and then a mark it never gave before (a new epoch)",
    );
  }
}
