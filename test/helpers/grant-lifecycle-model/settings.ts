// The model-based test's counts (raised or replayed from the environment) and the constants its commands share.

/**
 * Sequences per store and commands per sequence. `OAUTH_TEST_MODEL_RUNS` (and the three below) raise the counts for a
 * longer hunt; `OAUTH_TEST_MODEL_SEED`, `OAUTH_TEST_MODEL_PATH` and `OAUTH_TEST_MODEL_REPLAY_PATH` replay a failure
 * (fast-check prints all three: the last is the `replayPath` in the counterexample's comment; run the failing case alone,
 * `vitest -t`, since each variant draws its own command list);
 * `OAUTH_TEST_MODEL_TALLY=1` prints the answers and situations the sequences reached.
 */
export const RUNS = Number(process.env.OAUTH_TEST_MODEL_RUNS ?? 40);
/** Sequences of the short-lived variant, whose sleeps make each take seconds. */
export const EXPIRY_RUNS = Number(process.env.OAUTH_TEST_MODEL_EXPIRY_RUNS ?? 3);
/** Sequences of each JWT access token variant (one instance, two instances). */
export const JWT_RUNS = Number(process.env.OAUTH_TEST_MODEL_JWT_RUNS ?? 20);
/** Sequences of the variant whose administrative operations go through a second instance. */
export const TWO_INSTANCE_RUNS = Number(process.env.OAUTH_TEST_MODEL_TWO_INSTANCE_RUNS ?? 20);
/** A failure's seed and path, to replay it. */
export const SEED = process.env.OAUTH_TEST_MODEL_SEED === undefined ? undefined : Number(process.env.OAUTH_TEST_MODEL_SEED);
export const PATH = process.env.OAUTH_TEST_MODEL_PATH;
/** A command list's own replay path: without it fast-check cannot rebuild the shrunk list ("got wrong path"). */
export const REPLAY_PATH = process.env.OAUTH_TEST_MODEL_REPLAY_PATH;
/** The longest sequence of the long-lived variants. */
export const MAX_COMMANDS = 60;
/** First port of the servers under test (each store and variant takes the next: 24 from it); 0 (any) unless a run must keep to a range. */
export const PORT = Number(process.env.OAUTH_TEST_MODEL_PORT ?? 0);
/** Every model user's password. */
export const PASSWORD = 'model-password-0123456789';
/** The client_id stem of the resource server, listed in `introspectionClients`. */
export const RESOURCE_SERVER = 'model-resource-server';
/** The two scopes the server under test knows. */
export const READ = 'envelopes:read';
export const SIGN = 'envelopes:sign';
/** The scope sets an integration may be registered or updated with: none (all-access), one, both. */
export const SCOPE_SETS: readonly (readonly string[])[] = [[], [READ], [READ, SIGN]];
