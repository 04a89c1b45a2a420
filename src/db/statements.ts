// Compiled statements. A statement's text is a function of its shape (endpoint,
// verb, filter fields and operators, order, embeds, the caller's kind), never of
// its values: values — the caller's company included — are Params, bound by name
// each time the statement runs. So each shape is built and compiled once, kept
// in a bounded LRU, and runs as a prepared statement on every driver.
import { CompiledQuery, type Kysely } from 'kysely';
import type { Sql } from '../model/dialect.ts';
import { statementCacheLookups } from '../metrics.ts';
import { Lru } from '../model/lru.ts';

/** A statement parameter, bound by its key when the statement runs. */
export class Param {
  constructor(readonly key: string) {}
}

export type Values = Readonly<Record<string, unknown>>;

export interface Statement {
  readonly key: string;
  readonly text: string;
  /** Params, or constants fixed by the shape (JSON paths, literals from definitions). */
  readonly params: readonly unknown[];
}

export interface CacheStats { readonly size: number; readonly max: number; readonly hits: number; readonly misses: number }

export class StatementCache {
  private readonly entries: Lru<string, Statement>;
  private hits = 0;
  private misses = 0;

  /**
   * `verify`: rebuild on every hit and fail loudly when the text or a constant
   * differs — a shape key that misses a structural choice would otherwise run
   * another shape's SQL (the test suite runs with it on).
   */
  constructor(private readonly db: Kysely<unknown>, readonly max: number, private readonly verify = false) {
    this.entries = new Lru(max);
  }

  /** The statement of `key`, built by `build` the first time (or again after eviction). */
  get(key: string, build: () => Sql): Statement {
    const found = this.entries.get(key);
    if (found) {
      this.hits++;
      statementCacheLookups.inc({ result: 'hit' });
      if (this.verify) sameShape(found, this.compile(key, build()));
      return found;
    }
    this.misses++;
    statementCacheLookups.inc({ result: 'miss' });
    const made = this.compile(key, build());
    this.entries.set(key, made);
    return made;
  }

  stats(): CacheStats {
    return { size: this.entries.size, max: this.max, hits: this.hits, misses: this.misses };
  }

  private compile(key: string, query: Sql): Statement {
    const compiled = query.compile(this.db);
    return { key, text: compiled.sql, params: compiled.parameters };
  }
}

function sameShape(cached: Statement, rebuilt: Statement): void {
  const same = cached.text === rebuilt.text && cached.params.length === rebuilt.params.length
    && cached.params.every((p, i) => {
      const q = rebuilt.params[i];
      return p instanceof Param ? q instanceof Param && q.key === p.key : !(q instanceof Param) && JSON.stringify(p) === JSON.stringify(q);
    });
  if (!same) throw new Error(`statement shape ${cached.key} changed:\n${cached.text}\n${rebuilt.text}`);
}

/** The parameter list of a statement for these values. */
export function bind(s: Statement, values: Values): unknown[] {
  return s.params.map((p) => {
    if (!(p instanceof Param)) return p;
    const v = values[p.key];
    if (v === undefined) throw new Error(`statement ${s.key}: no value for ${p.key}`);
    return v;
  });
}

export const compiledQuery = (s: Statement, values: Values) => CompiledQuery.raw(s.text, bind(s, values));
