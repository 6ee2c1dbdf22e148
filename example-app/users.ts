// The example app's one demo user: password kept as an scrypt hash, checked in constant time.
import { randomBytes, scrypt, timingSafeEqual, createHash, type BinaryLike } from 'node:crypto';
import type { AuthenticatedUser, UserAuth } from 'express-oauth-router';

/** The demo user's login, from DEMO_USERNAME / DEMO_PASSWORD or generated. */
export interface DemoUserOptions {
  readonly username: string;
  readonly password: string;
}

const KEY_LENGTH = 32;

function scryptHash(password: BinaryLike, salt: Buffer): Promise<Buffer> {
  return new Promise((done, fail) => {
    scrypt(password, salt, KEY_LENGTH, (error, key) => (error ? fail(error) : done(key)));
  });
}

/** SHA-256 of a username, so that names of any length compare in constant time. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * A UserAuth with a single user. The password is hashed with scrypt at start-up and the plain text is not
 * kept; a login always runs scrypt, even for a wrong username, so response time does not reveal which
 * part was wrong. Both are compared in Unicode NFC: the router passes them as typed, and `é` may come precomposed
 * or as `e` + U+0301 from one keyboard to the next.
 * @see RFC 6749 §10.3 (credentials are confidential), OWASP password storage (scrypt), RFC 8265 §4.2 (OpaqueString: NFC).
 */
export async function createDemoUserAuth(options: DemoUserOptions): Promise<UserAuth> {
  const username = options.username.normalize('NFC');
  const user: AuthenticatedUser = { id: `user:${username}`, displayName: username };
  const usernameDigest = digest(username);
  const salt = randomBytes(16);
  const passwordHash = await scryptHash(options.password.normalize('NFC'), salt);
  return {
    async verifyCredentials(typedName: string, password: string): Promise<AuthenticatedUser | null> {
      const candidate = await scryptHash(password.normalize('NFC'), salt);
      // Both comparisons always run: `&&` would skip the second and leak timing.
      const nameMatches = timingSafeEqual(digest(typedName.normalize('NFC')), usernameDigest);
      const passwordMatches = timingSafeEqual(candidate, passwordHash);
      return nameMatches && passwordMatches ? user : null;
    },
    async findUser(id: string): Promise<AuthenticatedUser | null> {
      return id === user.id ? user : null;
    },
  };
}

/** A random demo password for when DEMO_PASSWORD is unset (printed once at start). */
export function createDemoPassword(): string {
  return randomBytes(12).toString('base64url');
}

/** Shortest DEMO_PASSWORD accepted under NODE_ENV=production: a password that is the only factor (NIST SP 800-63B-4 §3.1.1.2). */
export const MIN_PRODUCTION_PASSWORD_LENGTH = 15;

/**
 * Refuses, under NODE_ENV=production, a DEMO_PASSWORD that a few guesses find (`x`, `demo`, `choose-one`): there the
 * demo user signs in to integrations that reach the network, and the sign-in limits slow a guesser, they do not stop one.
 * Outside production any password goes, as the demo's own quick starts use.
 * @throws TypeError naming DEMO_PASSWORD and the length.
 */
export function checkDemoPassword(password: string | undefined, nodeEnv = process.env.NODE_ENV): void {
  if (nodeEnv !== 'production' || password === undefined) return;
  // Characters as a person counts them (code points), not UTF-16 units.
  if ([...password].length < MIN_PRODUCTION_PASSWORD_LENGTH) {
    throw new TypeError(`DEMO_PASSWORD must be at least ${MIN_PRODUCTION_PASSWORD_LENGTH} characters when NODE_ENV=production `
      + '(or leave it unset for a generated one, printed at start)');
  }
}
