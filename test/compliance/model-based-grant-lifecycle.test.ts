// Model-based test: random sequences of grant-lifecycle operations, sent over real HTTP to the router on each built-in store, checked against a small model of what must hold.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startHarness, errors } from '../helpers/grant-lifecycle-model/harness.js';
import { startSequence } from '../helpers/grant-lifecycle-model/sequence.js';
import { PATH, PORT, SEED } from '../helpers/grant-lifecycle-model/settings.js';
import { openStores, STORE_LABELS, STORES } from '../helpers/grant-lifecycle-model/store-pairs.js';
import { tally } from '../helpers/grant-lifecycle-model/tally.js';
import { VARIANTS } from '../helpers/grant-lifecycle-model/variants.js';

/*
 * What the model holds (README "What the endpoints do", "Administration from code", Security notes):
 * - a token is live until revoked or expired: revoking an access token ends it alone, a refresh token its grant
 *   (RFC 7009 §2.1); a replayed code ends its grant (RFC 6749 §4.1.2); disabling, rotating without a grace period,
 *   deleting, `revokeTokens` and withdrawing consent end every token they reach and void unredeemed codes; enabling
 *   brings none back; a client_id registered again after a delete inherits nothing;
 * - refresh tokens are not rotated (SPEC §4.5): one stays valid however often it is used;
 * - a code is used up by its first exchange, right or wrong: a wrong or missing PKCE verifier, or one sent for a code
 *   issued without a challenge, is invalid_grant (RFC 7636 §4.6) and leaves nothing to redeem;
 * - JWT access tokens under `jwt: { checkRevocation: true }` answer exactly as opaque ones do (README "JWT access
 *   tokens (RFC 9068)": requireBearer then requires the token's record, through the same exact cache);
 * - requireBearer and introspection agree with the model on every token, its bearer cache included (exact on this
 *   instance; another instance's revocation counts once this instance's feed has moved, at once on SQLite);
 * - every refusal is the RFC's status and code, nothing answers 5xx and the router logs no error.
 * The client authentication flood limit is off: the sequences present wrong secrets on purpose.
 */

describe.each(STORES)('grant lifecycle on the %s store, against a model (RFC 6749, 6750, 7009, 7662)', (label, available, open) => {
  // The memory store lives in one process: it has no second instance.
  const cases = VARIANTS.flatMap((variant, i) => (variant.instances === 1 || label !== 'memory' ? [[variant.name, i] as const] : []));

  it.skipIf(!available).each(cases)(
    'with %s: no revoked or expired token is accepted, a replayed code revokes its grant, every answer is the RFC\'s',
    async (_name, variantIndex) => {
      const variant = VARIANTS[variantIndex]!;
      const port = PORT === 0 ? 0 : PORT + STORE_LABELS.indexOf(label) * VARIANTS.length + variantIndex;
      const stores = await openStores(label, open, variant.instances);
      const harness = await startHarness(stores.served, stores.administered, `${label.toLowerCase()}-${variantIndex}`, port, variant.ttl, label !== 'SQLite', variant.format ?? 'opaque');
      let sequence = 0;
      let executed = 0;
      try {
        await fc.assert(
          fc.asyncProperty(variant.commands, async (cmds) => {
            sequence += 1;
            const { model, real } = await startSequence(harness, variant, sequence);
            await fc.asyncModelRun(() => ({ model, real }), cmds);
            executed += String(cmds).split('),').length;
            expect(errors, 'the router logged no error').toEqual([]);
          }),
          { numRuns: variant.runs, ...(SEED === undefined ? {} : { seed: SEED }), ...(PATH === undefined ? {} : { path: PATH }), endOnFailure: false },
        );
      } finally {
        await harness.close();
        await stores.dispose();
      }
      if (process.env.OAUTH_TEST_MODEL_TALLY) console.info(label, variant.name, sequence, 'sequences', executed, 'commands', Object.fromEntries([...tally].sort()));
      tally.clear();
    },
    600_000,
  );
});
