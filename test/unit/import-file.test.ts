// The import file formats: JSON Lines and CSV (RFC 4180), and the rows' issue dates (SPEC §9).
import { describe, expect, it } from 'vitest';
import { ImportFileError, parseImportFile } from '../../src/clients/import-file.js';
import { parseImportDate, readImportRow } from '../../src/clients/import-row.js';

describe('parseImportFile: CSV (RFC 4180)', () => {
  it('reads quoted cells with commas, doubled quotes and line breaks, numbering rows by the line they start on', () => {
    const text = '\uFEFFclient_id,name,flow,scopes,require_pkce\r\n'
      + 'a,"Acme, Inc.",client_credentials,"read  write",TRUE\r\n'
      + '\r\n'
      + 'b,"The ""New""\nCRM",authorization_code,,false\r\n'
      + 'c,C,client_credentials,,\r\n';
    expect(parseImportFile(text, 'csv')).toEqual([
      { line: 2, fields: { client_id: 'a', name: 'Acme, Inc.', flow: 'client_credentials', scopes: ['read', 'write'], require_pkce: true } },
      { line: 4, fields: { client_id: 'b', name: 'The "New"\nCRM', flow: 'authorization_code', require_pkce: false } },
      { line: 6, fields: { client_id: 'c', name: 'C', flow: 'client_credentials' } },
    ]);
  });

  it('reports a row with the wrong number of cells as that row, and an open quote or unknown column as the whole file', () => {
    expect(parseImportFile('client_id,name\na\n', 'csv')).toEqual([{ line: 2, error: '1 cells where the header has 2' }]);
    expect(() => parseImportFile('client_id,name\n"a,b\n', 'csv')).toThrow(ImportFileError);
    expect(() => parseImportFile('client_id,secret\na,b\n', 'csv')).toThrow(/unknown column "secret"/);
    expect(() => parseImportFile('client_id,client_id\na,b\n', 'csv')).toThrow(/appears twice/);
  });
});

describe('parseImportFile: JSON Lines', () => {
  it('reads one object per line, skips blank lines, treats null as absent and names unreadable lines', () => {
    const text = '{"client_id":"a","scopes":null}\r\n\n[1]\n{oops\n{"client_id":"b"}';
    expect(parseImportFile(text, 'jsonl')).toEqual([
      { line: 1, fields: { client_id: 'a' } },
      { line: 3, error: 'a row must be a JSON object' },
      { line: 4, error: 'not valid JSON' },
      { line: 5, fields: { client_id: 'b' } },
    ]);
  });
});

describe('import rows', () => {
  it('reads credentials_issued_at as a UTC date or a zoned date-time, and refuses the rest', () => {
    expect(parseImportDate('2021-01-14').toISOString()).toBe('2021-01-14T00:00:00.000Z');
    expect(parseImportDate('2021-01-15T00:30:00+01:00').toISOString()).toBe('2021-01-14T23:30:00.000Z');
    expect(parseImportDate('2021-01-14T23:59:59.999Z').toISOString()).toBe('2021-01-14T23:59:59.999Z');
    for (const bad of ['2021-01-15T00:00:00', '2021-02-30', '14/01/2021', '2021-1-14', '']) {
      expect(() => parseImportDate(bad), bad).toThrow(/ISO 8601/);
    }
  });

  it('refuses unknown fields, a missing issue date, and both or neither secret', () => {
    const row = { client_id: 'a', client_secret: 's', name: 'A', flow: 'client_credentials', credentials_issued_at: '2020-01-01' };
    expect(readImportRow(row).secret).toEqual({ kind: 'plaintext', value: 's' });
    expect(() => readImportRow({ ...row, issued_at: '2020-01-01' })).toThrow(/unknown field "issued_at"/);
    const { credentials_issued_at: _omitted, ...undated } = row;
    expect(() => readImportRow(undated)).toThrow(/credentials_issued_at .*required/);
    expect(() => readImportRow({ ...row, client_secret_hash: 'x' })).toThrow('give exactly one of client_secret and client_secret_hash');
    const { client_secret: _secret, ...secretless } = row;
    expect(() => readImportRow(secretless)).toThrow('give exactly one of client_secret and client_secret_hash');
    expect(() => readImportRow({ ...row, require_pkce: 'yes' })).toThrow('require_pkce must be true or false');
  });
});
