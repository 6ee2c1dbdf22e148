// Reads TRUST_PROXY into Express's `trust proxy` setting: which X-Forwarded-For hops name the real client.

/** What `app.set('trust proxy', …)` accepts, from the environment. */
export type TrustProxySetting = boolean | number | string;

/**
 * `TRUST_PROXY` → the value for `app.set('trust proxy', …)`. Unset: the setting stays off (the app talks to
 * clients directly). A whole number: that many proxy hops in front (`1` behind one load balancer). `true` /
 * `false`. Anything else: Express's list form, addresses or subnets or `loopback`, `linklocal`, `uniquelocal`,
 * comma-separated (`10.0.0.0/8, loopback`); Express refuses a bad one with a TypeError at start-up.
 * With the right setting `req.ip` is the client's address, which the sign-in and client-authentication limits
 * count per source; without it behind a proxy, every client has the proxy's address.
 * @throws TypeError for a negative or fractional number.
 */
export function parseTrustProxy(value: string | undefined): TrustProxySetting | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^-?\d+(\.\d+)?$/.test(value)) {
    const hops = Number(value);
    if (!Number.isInteger(hops) || hops < 0) throw new TypeError(`TRUST_PROXY must be a whole number of hops, got ${JSON.stringify(value)}`);
    return hops;
  }
  return value;
}

/**
 * What the app says at start-up about a setting that lets clients pick their own address: `true` trusts every
 * `X-Forwarded-For`, so a client that reaches the app directly chooses the source the sign-in and
 * client-authentication limits count, and the `ip` of every audit event. The README says never `true` then;
 * behind proxies that always overwrite the header it is safe, hence a warning and not a refusal.
 * @see RFC 7239 §8.3 (forwarded addresses are only as good as the proxies that wrote them).
 */
export function trustProxyWarning(setting: TrustProxySetting | undefined): string | null {
  return setting === true
    ? 'TRUST_PROXY=true trusts every X-Forwarded-For: a client reaching the app directly picks its own address for the rate limits and the audit log; set the number of proxy hops or their addresses instead'
    : null;
}
