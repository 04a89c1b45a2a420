// The two types every layer's SQL talks in: a piece of SQL (Kysely's raw builder)
// and the type of a field. Types only.
import type { RawBuilder } from 'kysely';

export type Sql = RawBuilder<unknown>;

export type FieldType = 'int' | 'bool' | 'string' | 'date' | 'datetime' | 'json';
