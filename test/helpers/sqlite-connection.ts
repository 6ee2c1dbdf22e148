// Reads or writes a SQLite file through a connection of its own, as another process (or the CLI) would.
import Database from 'better-sqlite3';

/** Opens `file`, runs `work` on the connection, and closes it whatever `work` does. */
export function withConnection<T>(file: string, work: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return work(db);
  } finally {
    db.close();
  }
}
