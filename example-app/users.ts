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
 * part was wrong.
 * @see RFC 6749 §10.3 (credentials are confidential), OWASP password storage (scrypt).
 */
export async function createDemoUserAuth(options: DemoUserOptions): Promise<UserAuth> {
  const user: AuthenticatedUser = { id: `user:${options.username}`, displayName: options.username };
  const usernameDigest = digest(options.username);
  const salt = randomBytes(16);
  const passwordHash = await scryptHash(options.password, salt);
  return {
    async verifyCredentials(username: string, password: string): Promise<AuthenticatedUser | null> {
      const candidate = await scryptHash(password, salt);
      // Both comparisons always run: `&&` would skip the second and leak timing.
      const nameMatches = timingSafeEqual(digest(username), usernameDigest);
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
