// The rule an envelope's title follows: what POST /api/v1/envelopes accepts, and why it refuses the rest.

/** The longest title, in Unicode code points (not UTF-16 units: an emoji such as U+1F4DD counts once). */
export const MAX_TITLE = 200;

// The same characters the package refuses in an integration's name (src/clients/client-fields.ts, not exported):
// C0 and C1 controls (NUL, ESC, newline: a title is shown and logged, and could forge a line or move a terminal's
// cursor) and Unicode's bidirectional formatting characters (they reorder what is shown, Unicode TR #9, so
// `Lease\u202Efdp.exe` reads as an .exe). test/example-app/check-title.test.ts keeps the two rules in step.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// What makes a title show at all, and the letters and symbols that render as nothing (the package's name rule).
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
const BLANK_LOOKALIKES = /[\u115f\u1160\u3164\uffa0\u2800]/gu;
// A lone surrogate is no character: UTF-8 cannot encode it, so the JSON answer would carry U+FFFD instead.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The title of a new envelope, or the rule it breaks (an `error_description` for the 400): a string of 1 to
 * MAX_TITLE code points that shows at least one character, without control characters, lone surrogates or bidirectional
 * formatting characters. @see RFC 9110 §15.5.1 (400 Bad Request).
 */
export function checkTitle(value: unknown): { title: string } | { refused: string } {
  if (typeof value !== 'string' || value.trim().length === 0) return { refused: 'title must be a non-empty string' };
  // As an integration's name must (client-fields.ts): a title of U+200B alone passed trim() and showed nothing.
  if (!VISIBLE.test(value.replace(BLANK_LOOKALIKES, ''))) {
    return { refused: 'title must show at least one letter, digit, punctuation mark or symbol (not only spaces or invisible characters)' };
  }
  if (LONE_SURROGATE.test(value)) return { refused: 'title must not contain a lone surrogate (an unpaired U+D800–U+DFFF)' };
  if ([...value].length > MAX_TITLE) return { refused: `title must be at most ${MAX_TITLE} characters (Unicode code points)` };
  if (CONTROL.test(value)) return { refused: 'title must not contain control characters (U+0000–U+001F, U+007F–U+009F)' };
  if (BIDI_CONTROLS.test(value)) {
    return { refused: 'title must not contain bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)' };
  }
  return { title: value };
}
