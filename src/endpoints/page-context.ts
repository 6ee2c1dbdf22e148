// What the authorization, login and consent endpoints of one base address share.
import type { Store } from '../stores/contract.js';
import type { UserAuth } from '../user-auth.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { LoginRateLimit } from '../http/login-rate-limit.js';

/** Dependencies of the browser-facing endpoints of one base address. */
export interface PageContext {
  readonly store: Store;
  readonly userAuth: UserAuth;
  readonly options: ResolvedOptions;
  readonly issuer: ResolvedIssuer;
  /** The sign-in limit (`loginRateLimit`), shared by every base address; absent or null when off. */
  readonly loginRateLimit?: LoginRateLimit | null;
  readonly paths: {
    readonly authorize: string;
    readonly login: string;
    readonly consent: string;
    /** The connected-applications page, and its withdraw form's target. */
    readonly consents: string;
    readonly withdraw: string;
    /** The sign-out form's target. */
    readonly logout: string;
  };
}
