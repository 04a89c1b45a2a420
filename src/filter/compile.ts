// Typed filter conditions and their SQL. Values are always bound parameters;
// operators come from a fixed table. NULL semantics: `!v` also matches
// NULL and missing JSON keys, every other operator never matches NULL.
import { sql } from 'kysely';
import type { Sql, SqlDialect } from '../model/dialect.ts';
import type { Param } from '../db/statements.ts';
import { invalidFilter } from '../errors.ts';
import { addDays, isDate, isDatetime } from '../model/dates.ts';
import type { FilterSegment, Operator } from './parse.ts';
import type { FieldRef } from './resolve.ts';

/** A value as typed, or the parameter that stands for it in a compiled statement. */
export type Bound<T> = T | Param;

export type Typed =
  | { readonly kind: 'null' }
  | { readonly kind: 'scalar'; readonly value: Bound<string | number> }
  /** A date-only value against a datetime field: compares the date part. */
  | { readonly kind: 'day'; readonly day: Bound<string>; readonly next: Bound<string> }
  /** Case-insensitive (ASCII) substring; every character of the needle is literal. */
  | { readonly kind: 'contains'; readonly needle: Bound<string> }
  /**
   * `number` is the value's text when it is a JSON number (compared as a number by
   * the database, whatever its size), else null (the statement's shape differs).
   */
  | { readonly kind: 'json'; readonly text: Bound<string>; readonly number: Bound<string> | null };

export interface Condition {
  readonly segment: FilterSegment;
  readonly ref: FieldRef;
  readonly value: Typed;
  /** Conditions of which any, this one or these, may hold: a search over several fields (never from a request's filters). */
  readonly orElse?: readonly Condition[];
}

const INTEGER = /^-?\d+$/;

/** The start of the next day as datetime text; after 9999-12-31, text beyond every datetime of that day. */
const nextDay = (day: string) => (day === '9999-12-31' ? '9999-12-32' : addDays(day, 1));
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Checks the value against the field's type ("Typing"). */
export function typeCondition(segment: FilterSegment, ref: FieldRef): Condition {
  const { op, value } = segment;
  const make = (v: Typed): Condition => ({ segment, ref, value: v });
  if (value === null) {
    if (op !== '=' && op !== '!') throw invalidFilter(segment.raw);
    return make({ kind: 'null' });
  }
  if (op === '~') return make({ kind: 'contains', needle: value });
  if (ref.keys.length > 0) {
    return make({ kind: 'json', text: value, number: JSON_NUMBER.test(value) ? value : null });
  }
  switch (ref.field.type) {
    case 'int':
    case 'bool': {
      const n = Number(value);
      if (!INTEGER.test(value) || !Number.isSafeInteger(n)) throw invalidFilter(segment.raw);
      return make({ kind: 'scalar', value: n });
    }
    case 'date':
      if (!isDate(value)) throw invalidFilter(segment.raw);
      return make({ kind: 'scalar', value });
    case 'datetime':
      if (isDate(value)) return make({ kind: 'day', day: value, next: nextDay(value) });
      if (!isDatetime(value)) throw invalidFilter(segment.raw);
      return make({ kind: 'scalar', value });
    case 'json':
      return make({ kind: 'json', text: value, number: JSON_NUMBER.test(value) ? value : null });
    case 'string':
      return make({ kind: 'scalar', value });
  }
}

const SQL_OP: Readonly<Record<Operator, string>> = { '=': '=', '>': '>', '<': '<', '+': '>=', '-': '<=', '!': '<>', '~': 'LIKE' };

const cmp = (expr: Sql, op: Operator, v: unknown): Sql => sql`(${expr} ${sql.raw(SQL_OP[op])} ${v})`;

/** SQL for one condition; `expr` is the field's column or computed expression. */
export function compileCondition(c: Condition, expr: Sql, hooks: SqlDialect): Sql {
  // Every value below is a parameter; only the field, operator and kind of value shape the SQL.
  if (c.ref.keys.length > 0 || c.ref.field.type === 'json') return compileJson(c, hooks.json(expr, c.ref.keys), hooks);
  const { op } = c.segment;
  const v = c.value;
  switch (v.kind) {
    case 'null':
      return op === '=' ? sql`(${expr} IS NULL)` : sql`(${expr} IS NOT NULL)`;
    case 'contains':
      return hooks.contains(c.ref.field.type === 'string' ? expr : hooks.text(expr), v.needle);
    case 'scalar':
      return op === '!' ? sql`(${expr} IS NULL OR ${expr} <> ${v.value})` : cmp(expr, op, v.value);
    case 'day': {
      const onDay = sql`(${expr} >= ${v.day} AND ${expr} < ${v.next})`;
      const byOp: Readonly<Record<Exclude<Operator, '~'>, Sql>> = {
        '=': onDay, '!': sql`(${expr} IS NULL OR NOT ${onDay})`, '>': sql`(${expr} >= ${v.next})`,
        '<': sql`(${expr} < ${v.day})`, '+': sql`(${expr} >= ${v.day})`, '-': sql`(${expr} < ${v.next})`,
      };
      // `~` never gets here: it compares text and has its own kind.
      return byOp[op as Exclude<Operator, '~'>];
    }
    case 'json':
      throw new Error('unreachable: JSON value on a plain field');
  }
}

function compileJson(c: Condition, j: ReturnType<SqlDialect['json']>, hooks: SqlDialect): Sql {
  const { op } = c.segment;
  const v = c.value;
  const missing = sql`(${j.kind} IS NULL OR ${j.kind} = 'null')`;
  if (v.kind === 'null') return op === '=' ? missing : sql`(NOT ${missing})`;
  if (v.kind === 'contains') return hooks.contains(j.text, v.needle);
  if (v.kind !== 'json') throw new Error('unreachable: plain value on a JSON path');
  // A value that is not a JSON number compares as text with every scalar, numbers included.
  const textKinds = sql.raw(v.number === null ? `('string', 'boolean', 'number')` : `('string', 'boolean')`);
  const compare = (o: Operator): Sql => {
    const asText = sql`(${j.kind} IN ${textKinds} AND ${cmp(j.text, o, v.text)})`;
    return v.number === null ? asText : sql`((${j.kind} = 'number' AND ${cmp(j.number, o, hooks.number(v.number))}) OR ${asText})`;
  };
  if (op === '!') return sql`(${missing} OR (${j.kind} <> 'container' AND NOT ${compare('=')}))`;
  return compare(op);
}
