// Whether a value may be registered as a client_id: 1 to 255 VSCHAR, printable ASCII and space.
import { STORE_POLICY } from '../stores/store-policy.js';

/** RFC 6749 Appendix A: VSCHAR = %x20-7E. */
const VSCHARS = /^[\x20-\x7e]+$/;

/**
 * Whether `value` is a client_id registration accepts: 1 to `STORE_POLICY.maxIdLength` characters, each a VSCHAR
 * (%x20-7E). Outside it are control characters (a tab, DEL), which logs, terminals and command lines mangle, and
 * every non-ASCII character, which a client must put in Basic credentials in a charset RFC 7617 §2.1 leaves open
 * (UTF-8 or ISO-8859-1), so the server can only guess which one it was sent. The characters Basic must form-encode
 * (`:`, `%`, `+`, space) are VSCHAR and accepted: RFC 6749 §2.3.1 encodes them.
 * Only registration (the admin API, its import, `registerClient`) applies it: a request's id is looked up as any
 * store id (`isStoreId`), so an integration stored before, or by a tool, keeps working.
 * @see RFC 6749 §2.2 (client identifier), §2.3.1 (form-encoded in Basic), Appendix A.1 (`client_id = *VSCHAR`).
 */
export function isClientId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= STORE_POLICY.maxIdLength && VSCHARS.test(value);
}
