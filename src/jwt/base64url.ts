// base64url (RFC 4648 §5) encoding of JWS segments, strict on decode: Buffer.from silently skips bad characters.
const SEGMENT = /^[A-Za-z0-9_-]*$/;

/**
 * base64url of the UTF-8 JSON of `value`, without padding, as a JWS header or payload segment.
 * @see RFC 7515 §2 (Base64url Encoding), §7.1 (compact serialization).
 */
export function encodeJsonSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/**
 * Decodes a segment strictly: only the base64url alphabet, no padding, no length that no encoder makes.
 * Returns `null` for anything else, so a token with smuggled characters never reaches a JSON parser.
 * @see RFC 7515 §2, RFC 4648 §5.
 */
export function decodeSegment(segment: string): Buffer | null {
  if (!SEGMENT.test(segment) || segment.length % 4 === 1) return null;
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
