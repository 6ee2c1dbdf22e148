// Every rule of the Store contract, in report order: the data both runners (vitest and plain) run.
import type { StoreTier } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { absentRules } from './conformance-absent.js';
import { backendTimeRules } from './conformance-backend-time.js';
import { clientLifecycleRules } from './conformance-client-lifecycle.js';
import { disableClientRules } from './conformance-disable-client.js';
import { enableClientRules } from './conformance-enable-client.js';
import { clientCopyRules } from './conformance-client-copies.js';
import { clientRules } from './conformance-clients.js';
import { codeRules } from './conformance-codes.js';
import { consentRules } from './conformance-consents.js';
import { exactIdRules } from './conformance-exact-ids.js';
import { signingKeyRules } from './conformance-keys.js';
import { replaceSigningKeysRules } from './conformance-replace-signing-keys.js';
import { outageRules } from './conformance-outage.js';
import { peerRaceRules } from './conformance-peer-races.js';
import { rateLimitRules } from './conformance-rate-limits.js';
import { raceRules } from './conformance-races.js';
import { revocationRules } from './conformance-revocation.js';
import { revocationFeedRules } from './conformance-revocation-feed.js';
import { timeZoneRules } from './conformance-time-zones.js';
import { tokenRaceRules } from './conformance-token-races.js';
import { tokenRules } from './conformance-tokens.js';

/** The order tiers are reported in. @see DESIGN §2 (the Store's tiers) */
export const TIER_ORDER: readonly StoreTier[] = ['required', 'administration', 'consents', 'signingKeys', 'rateLimits', 'revocationFeed'];

function inTierOrder(rules: readonly ConformanceRule[]): readonly ConformanceRule[] {
  const names = new Set<string>();
  for (const rule of rules) {
    // A duplicate name would make `only` and the report ambiguous.
    if (names.has(rule.name)) throw new Error(`duplicate conformance rule name: ${rule.name}`);
    names.add(rule.name);
  }
  return TIER_ORDER.flatMap((tier) => rules.filter((rule) => rule.tier === tier));
}

/**
 * Every rule of the Store contract, as data (`{ tier, name, run }`), grouped by tier: what a correct store
 * does, stated rule by rule. `runStoreConformance` registers each as a vitest test and
 * `checkStoreConformance` runs them anywhere; another runner can loop over them the same way.
 * @see RFC 6749 §4.1.2, §10.3–10.5, RFC 7009 §2.1, RFC 9068 §4, RFC 6819 §5.1.4.2.3.
 */
export const CONFORMANCE_RULES: readonly ConformanceRule[] = inTierOrder([
  ...absentRules,
  ...codeRules,
  ...tokenRules,
  ...timeZoneRules,
  ...backendTimeRules,
  ...clientRules,
  ...clientLifecycleRules,
  ...disableClientRules,
  ...enableClientRules,
  ...clientCopyRules,
  ...revocationRules,
  ...consentRules,
  ...signingKeyRules,
  ...replaceSigningKeysRules,
  ...rateLimitRules,
  ...revocationFeedRules,
  ...exactIdRules,
  ...tokenRaceRules,
  ...raceRules,
  ...peerRaceRules,
  ...outageRules,
]);
