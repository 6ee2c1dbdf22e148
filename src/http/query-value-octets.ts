// A query parameter's value as the octets the request sent, for echoing one that is not UTF-8.

const HEX = '0123456789ABCDEF';

/** RFC 3986 §2.3: the characters a percent-encoding never needs to escape. */
function isUnreserved(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
    || byte === 0x2d || byte === 0x2e || byte === 0x5f || byte === 0x7e;
}

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/**
 * The octets of one raw `application/x-www-form-urlencoded` token: `+` is a space, `%XX` an octet, else UTF-8. ASCII,
 * all a request target holds, is pushed as its code: a Buffer made for each character cost ~400 ns a character.
 */
function octetsOf(raw: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 0x2b) bytes.push(0x20);
    else if (code === 0x25 && isHex(raw.charCodeAt(i + 1)) && isHex(raw.charCodeAt(i + 2))) {
      bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (code < 0x80) bytes.push(code);
    else for (const byte of Buffer.from(raw[i]!)) bytes.push(byte);
  }
  return Buffer.from(bytes);
}

/**
 * The first non-empty value of `name` in `rawQuery` (a request target's query, as received), each octet but the
 * unreserved percent-encoded: the same octets the client sent, where a parsed string holds U+FFFD for octets that
 * are not UTF-8. `undefined` when the name has no non-empty value. Names are compared as octets, as the parser does.
 * @see RFC 6749 §4.1.2.1 (`state`: "the exact value received from the client"), WHATWG URL §5.1, RFC 3986 §2.1.
 */
export function queryValueOctets(rawQuery: string, name: string): string | undefined {
  const wanted = Buffer.from(name);
  const asciiName = wanted.length === name.length;
  for (const pair of rawQuery.split('&')) {
    const equals = pair.indexOf('=');
    // No character spells less than a third of an octet (`%XX`), so a name over three times the wanted one's octets
    // cannot be it and is not decoded: anyone's 15,000-character name before `state` cost 6 ms of CPU.
    if (equals < 0 || equals > 3 * wanted.length) continue;
    const rawName = pair.slice(0, equals);
    // Without an escape or a `+`, a name's octets are its characters' (a non-ASCII one is never an ASCII name's):
    // compared as text, so thousands of short names before `state` cost no Buffer each.
    const plain = asciiName && !rawName.includes('%') && !rawName.includes('+');
    if (plain ? rawName !== name : !octetsOf(rawName).equals(wanted)) continue;
    const value = octetsOf(pair.slice(equals + 1));
    if (value.length === 0) continue;
    let encoded = '';
    for (const byte of value) encoded += isUnreserved(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
    return encoded;
  }
  return undefined;
}
