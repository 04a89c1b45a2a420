// A company's colours as CSS custom properties, served from the portal's own
// origin. Only colours that passed the `#rgb`/`#rrggbb` test reach here; the text
// on the primary colour is black or white, whichever reads better on it, and the
// primary becomes the link colour only where it reads on white (WCAG AA, 4.5:1).
import type { Brand } from '../admin/branding.ts';

const channels = (hex: string): number[] => {
  const h = hex.slice(1);
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  return [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16) / 255);
};

/** Relative luminance (WCAG 2.1). */
export function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};

export function brandCss(brand: Brand | null): string {
  const lines: string[] = [];
  if (brand?.primary) {
    const on = contrast(brand.primary, '#ffffff') >= contrast(brand.primary, '#000000') ? '#ffffff' : '#000000';
    lines.push(`--primary: ${brand.primary};`, `--on-primary: ${on};`);
    if (contrast(brand.primary, '#ffffff') >= 4.5) lines.push(`--link: ${brand.primary};`);
  }
  if (brand?.accent) lines.push(`--accent: ${brand.accent};`);
  return lines.length === 0 ? '/* the default look */\n' : `:root {\n  ${lines.join('\n  ')}\n}\n`;
}
