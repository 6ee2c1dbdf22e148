// The host's UserAuth with a deadline on each hook that answers a promise, so a hung user directory holds no request.
import type { UserAuth } from '../user-auth.js';
import { HostHookUnavailableError } from './call-host-hook.js';

/**
 * Settles as `answer`, or rejects with HostHookUnavailableError (a StoreUnavailableError) once `seconds` pass without
 * it: callHostHook logs that one's message, its own, where a host's StoreUnavailableError is named without its message.
 */
function within<T>(hook: string, answer: Promise<T>, seconds: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new HostHookUnavailableError(`UserAuth.${hook} unavailable: no answer within ${seconds} s`)), seconds * 1000);
    // A pending deadline must not keep a process that is shutting down alive.
    timer.unref();
    // A JavaScript host's hook may answer a plain value.
    Promise.resolve(answer).then((value) => { clearTimeout(timer); resolve(value); }, (err: unknown) => { clearTimeout(timer); reject(err); });
  });
}

/**
 * `userAuth` with `verifyCredentials`, `currentUser` and `findUser` bounded by `seconds` (the `userAuthTimeout`
 * option): a hook that never answers (a directory behind a black-holed connection, a pool waiting for a free
 * connection for ever) is an outage, answered 503 `temporarily_unavailable` as a thrown one is (callHostHook), not a
 * request held until the client gives up. Its late answer is ignored. Each hook is still called on the host's object
 * (a class's methods read `this`); `loginUrl` and `logoutUrl` answer at once and are passed through; an absent hook
 * stays absent, since the router tells the two ways in apart by which hooks exist.
 * @see RFC 6749 §4.1.2.1 and §5.2 (temporarily_unavailable), RFC 9110 §15.6.4 (503).
 */
export function boundUserAuth(userAuth: UserAuth, seconds: number): UserAuth {
  return {
    ...(userAuth.verifyCredentials
      ? { verifyCredentials: (username: string, password: string) => within('verifyCredentials', userAuth.verifyCredentials!(username, password), seconds) }
      : {}),
    ...(userAuth.currentUser ? { currentUser: (req) => within('currentUser', userAuth.currentUser!(req), seconds) } : {}),
    ...(userAuth.loginUrl ? { loginUrl: (req, returnTo) => userAuth.loginUrl!(req, returnTo) } : {}),
    ...(userAuth.logoutUrl ? { logoutUrl: (req) => userAuth.logoutUrl!(req) } : {}),
    ...(userAuth.findUser ? { findUser: (id: string) => within('findUser', userAuth.findUser!(id), seconds) } : {}),
  };
}
