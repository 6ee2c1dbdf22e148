// How a #rrggbb colour reads against white, as WCAG measures it.

/** sRGB channel (0–255) → linear light, per WCAG 2.x's relative luminance. */
function linear(channel: number): number {
  const c = channel / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/**
 * The contrast ratio of `hex` (`#rrggbb`) against white, from 1 (white) to 21 (black). The pages put white text on
 * the brand colour and the brand colour on white, so this one ratio decides both.
 * @see WCAG 2.2 §1.4.3 (4.5:1 for text), §1.4.11 (3:1 for focus rings and borders), "relative luminance".
 */
export function contrastWithWhite(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => linear(parseInt(hex.slice(at, at + 2), 16)));
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return 1.05 / (luminance + 0.05);
}
