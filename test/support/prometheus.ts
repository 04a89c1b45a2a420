// A reader of Prometheus' text exposition format (version 0.0.4), written from the
// format's description rather than taken from the library under test: families by
// name with their TYPE, samples with their labels and values.
import assert from 'node:assert/strict';

export interface Sample { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }
export interface Family { readonly name: string; type: string; help: string; readonly samples: Sample[] }

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
const UNESCAPE: Readonly<Record<string, string>> = { n: '\n', '\\': '\\', '"': '"' };

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    assert.ok(m && m.index === at, `malformed labels in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? `\\${c}`);
  }
  return labels;
}

const number = (text: string): number => (text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text));

/** Every family of an exposition; a sample whose name extends a histogram's or summary's (_bucket, _sum, _count) is its family's. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') family(meta[2]!).type = meta[3]!;
      else family(meta[2]!).help = meta[3]!;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `malformed sample line: ${line}`);
    const name = m[1]!;
    const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
    const owner = base && ['histogram', 'summary'].includes(families.get(base)?.type ?? '') ? base : name;
    const value = number(m[3]!);
    assert.ok(!Number.isNaN(value), `not a number in: ${line}`);
    family(owner).samples.push({ name, labels: m[2] ? parseLabels(m[2], line) : {}, value });
  }
  return families;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
export function valueOf(families: Map<string, Family>, family: string, labels: Record<string, string> = {}, name = family): number {
  const f = families.get(family);
  assert.ok(f, `no family ${family}`);
  const matching = f.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.reduce((sum, s) => sum + s.value, 0);
}
