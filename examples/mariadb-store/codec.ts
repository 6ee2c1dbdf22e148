// How the example MariaDB store writes what SQL has no column type for: lists as JSON text, booleans as 0/1.

/** A list of strings (scopes, redirect URIs) as JSON text: order and every character kept. */
export function encodeList(list: readonly string[]): string {
  return JSON.stringify(list);
}

/** The list back from its JSON text. */
export function decodeList(text: string): string[] {
  return JSON.parse(text) as string[];
}

/** mysql2 reads BOOLEAN (TINYINT(1)) as a number. */
export function decodeBoolean(value: number | boolean): boolean {
  return value === true || value === 1;
}

/** Whether an error is a duplicate key: an insert-only write lost to an existing row. */
export function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ER_DUP_ENTRY';
}
