// The page frame shared by the login, consent and error pages: semantic, responsive, no external assets.
import { escapeHtml } from './escape-html.js';
import { isolate } from './isolate.js';

/** Branding and per-response values for a page. */
export interface PageFrame {
  readonly title: string;
  readonly productName: string;
  /** CSP nonce of the one inline stylesheet. */
  readonly nonce: string;
  /** Accent colour, `#rrggbb`, at least 4.5:1 against white (validated at start-up). */
  readonly brandColor: string;
  readonly body: string;
  /** The page's language (BCP 47) and direction; default English, left to right. */
  readonly lang?: string;
  readonly dir?: 'ltr' | 'rtl';
}

// Text sizes, the card's width and its breakpoint in rem/em, not px: they follow the user's default font size (a
// browser's "font size" setting), so body text and buttons grow with the headings and the small print instead of staying
// 16px under them. At the default 16px the page is the same as in px.
const STYLE = `
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--field:#848d97;--bg:#f6f8fa;--danger:#b42318}
*{box-sizing:border-box}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{padding:16px 24px;background:#fff;border-bottom:1px solid var(--line);font-weight:600}
main{max-width:27.5rem;margin:32px auto;padding:24px;background:#fff;border:1px solid var(--line);border-radius:8px;overflow-wrap:anywhere}
h1{font-size:1.4rem;margin:0 0 12px}
p{margin:0 0 12px}
label{display:block;font-weight:600;margin:12px 0 4px}
input[type=text],input[type=password]{width:100%;padding:10px 12px;font:inherit;border:1px solid var(--field);border-radius:6px}
input:focus-visible,button:focus-visible{outline:3px solid var(--brand);outline-offset:2px}
.actions{display:flex;gap:12px;margin-top:20px;flex-wrap:wrap}
button{flex:1 1 120px;padding:10px 16px;font:inherit;font-weight:600;border-radius:6px;border:1px solid var(--brand);cursor:pointer}
button.primary{background:var(--brand);color:#fff}
button.secondary{background:#fff;color:var(--brand)}
button.link{flex:none;min-height:24px;padding:2px 0;border:0;background:none;color:var(--brand);font-weight:400;text-decoration:underline}
ul{margin:0 0 12px;padding-left:20px}
ul.plain{list-style:none;padding:0}ul.plain>li{border-top:1px solid var(--line);padding:12px 0}
h2{font-size:1.1rem;margin:0 0 8px}
.error{color:var(--danger);font-weight:600}
.muted{color:var(--muted);font-size:.9rem}
@media (max-width:30em){main{margin:0;border:0;border-radius:0}}
`;

/**
 * Renders a whole page. All dynamic values are escaped by the callers' templates; the title is escaped here.
 * @see WCAG 2.2 §3.1.1 (language of page), HTML Living Standard §3.2.6.4 (dir).
 */
export function renderPage(frame: PageFrame): string {
  const product = escapeHtml(frame.productName);
  return `<!doctype html>
<html lang="${escapeHtml(frame.lang ?? 'en')}"${frame.dir === 'rtl' ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(frame.title)} – ${isolate(product)}</title>
<style nonce="${escapeHtml(frame.nonce)}">:root{--brand:${escapeHtml(frame.brandColor)}}${STYLE}</style>
</head>
<body>
<header>${product}</header>
<main>
${frame.body}
</main>
</body>
</html>
`;
}
