// How the report prints: numbers, aligned tables, and values beside their targets.
import { say } from './config.ts';

export const ms = (v: number | null): string => (v === null || Number.isNaN(v) ? '-' : Number.isInteger(v) || v >= 100 ? v.toFixed(0) : v.toFixed(1));
export const mib = (v: number | null): string => (v === null ? '-' : v.toFixed(0));

/** A table: the first column left-aligned, the others right-aligned. */
export function printColumns(title: string, header: readonly string[], cells: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const format = (c: readonly string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  say(`\n${title}\n${format(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${cells.map(format).join('\n')}`);
}

export type Compare = '≥' | '≤' | '<';
/** A figure beside its target; a null target is a figure reported without one. */
export interface Ratio { readonly name: string; readonly value: number; readonly compare: Compare; readonly target: number | null; readonly unit?: string }

export const meets = (value: number, compare: Compare, target: number): boolean =>
  (compare === '≥' ? value >= target : compare === '≤' ? value <= target : value < target);

export function printRatios(ratios: readonly Ratio[]): void {
  const width = Math.max(...ratios.map((r) => r.name.length));
  for (const r of ratios) {
    // Three digits: a ratio just under its target must not read as the target (0.299 is no 0.30).
    const value = r.unit ? `${ms(r.value)} ${r.unit}` : r.value.toPrecision(3);
    const target = r.target === null ? '(reported, no target)' : `target ${`${r.compare} ${r.target}${r.unit ? ` ${r.unit}` : ''}`.padEnd(10)}  ${meets(r.value, r.compare, r.target) ? 'PASS' : 'MISS'}`;
    say(`  ${r.name.padEnd(width)}  ${value.padStart(9)}   ${target}`);
  }
}
