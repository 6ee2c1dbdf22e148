// base64url (RFC 4648 §5) encoding of JWS segments, strict on decode: Buffer.from silently skips bad characters.
const SEGMENT = /^[A-Za-z0-9_-]*$/;

/**
 * base64url of the UTF-8 JSON of `value`, without padding, as a JWS header or payload segment.
 * @see RFC 7515 §2 (Base64url Encoding), §7.1 (compact serialization).
 */
export function encodeJsonSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The base64url alphabet's value of one character code (`A` 0 … `_` 63), for a character SEGMENT admits. */
function sextet(code: number): number {
  if (code >= 97) return code - 71; // a–z: 26–51
  if (code >= 65) return code === 95 ? 63 : code - 65; // A–Z: 0–25; _: 63
  return code === 45 ? 62 : code + 4; // 0–9: 52–61; -: 62
}

/**
 * Decodes a segment strictly: only the base64url alphabet, no padding, no length that no encoder makes, and the
 * last character's unused bits zero, so each byte string has exactly one text: otherwise the last character of a
 * signature could be swapped for up to 15 others that decode to the same bytes, and one token would have many
 * strings, each a new key to whatever a host keys by the token's text. Returns `null` for anything else, so a token
 * with smuggled characters never reaches a JSON parser.
 * @see RFC 7515 §2, RFC 4648 §5 and §3.5 (canonical encoding: pad bits set to zero), RFC 8725 §3.11.
 */
export function decodeSegment(segment: string): Buffer | null {
  const rest = segment.length % 4;
  if (!SEGMENT.test(segment) || rest === 1) return null;
  // 2 characters left over carry 1 byte (4 bits unused), 3 carry 2 bytes (2 bits unused).
  if (rest !== 0 && (sextet(segment.charCodeAt(segment.length - 1)) & (rest === 2 ? 0b1111 : 0b11)) !== 0) return null;
  return Buffer.from(segment, 'base64url');
}

/**
 * Decodes a segment holding a JSON object (JOSE header or JWT claims set); `null` for anything else.
 * @see RFC 7515 §5.2 steps 2–3, RFC 7519 §7.2 steps 9–10.
 */
export function decodeJsonObjectSegment(segment: string): Record<string, unknown> | null {
  const bytes = decodeSegment(segment);
  if (bytes === null) return null;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
