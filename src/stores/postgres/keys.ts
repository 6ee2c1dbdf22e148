// The PostgreSQL store's signing-key part: insert-only rows, insert-if-none guarded by a partial unique index.
import type { SaveSigningKeyOptions, SigningAlgorithm, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';

interface SigningKeyRow {
  kid: string;
  algorithm: string;
  private_key_pem: string;
  created_at: Date;
}

/**
 * Signing keys of JWT access tokens. `onlyIfNone` inserts with `initial = true`: concurrent first starts
 * both pass the NOT EXISTS check, but the partial unique index on `initial` admits one row, and the loser's
 * ON CONFLICT DO NOTHING inserts nothing, so every instance converges on one key.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createPostgresKeyStore(db: PostgresRunner, t: PostgresTables): SigningKeyStore {
  const list = prepareSql(`SELECT kid, algorithm, private_key_pem, created_at FROM ${t.signingKeys}
    ORDER BY created_at, kid COLLATE "C"`);
  const insert = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at)
    VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING kid`);
  const insertIfNone = prepareSql(`INSERT INTO ${t.signingKeys} (kid, algorithm, private_key_pem, created_at, initial)
    SELECT $1, $2, $3, $4, true WHERE NOT EXISTS (SELECT 1 FROM ${t.signingKeys})
    ON CONFLICT DO NOTHING RETURNING kid`);
  return {
    async listSigningKeys(): Promise<readonly SigningKeyRecord[]> {
      const { rows } = await db.query<SigningKeyRow>(list, []);
      return rows.map((row) => ({
        kid: row.kid,
        algorithm: row.algorithm as SigningAlgorithm,
        privateKeyPem: row.private_key_pem,
        createdAt: row.created_at,
      }));
    },
    async saveSigningKey(record: SigningKeyRecord, options: SaveSigningKeyOptions = {}): Promise<boolean> {
      const { rows } = await db.query(options.onlyIfNone === true ? insertIfNone : insert, [
        record.kid, record.algorithm, record.privateKeyPem, record.createdAt,
      ]);
      return rows.length === 1;
    },
  };
}
