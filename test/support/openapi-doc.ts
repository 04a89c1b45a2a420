// The OpenAPI document as the tests read it: the members of OpenAPI 3.1 (and of
// JSON Schema) the service's document uses, and the extensions it adds. Like the
// records' types in api.ts, they only let a test name what it reads; what the values
// are is what the assertions (and the checks against real answers) hold.
import assert from 'node:assert/strict';
import { isObject, type Json } from './api.ts';

export interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly items?: Schema;
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly additionalProperties?: boolean | Schema;
  readonly enum?: readonly Json[];
  readonly minimum?: number;
  readonly minLength?: number;
  readonly description?: string;
}

export interface Parameter {
  readonly $ref?: string;
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly style?: string;
  readonly explode?: boolean;
  readonly schema?: Schema;
  /** Each field a filter may name, and its type in words. */
  readonly 'x-filterable-fields'?: Readonly<Record<string, string>>;
}

export interface MediaType { readonly schema: Schema }

export interface Header {
  readonly $ref?: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly schema?: Schema;
}

export interface Response {
  readonly $ref?: string;
  readonly description?: string;
  readonly headers?: Readonly<Record<string, Header>>;
  readonly content?: Readonly<Record<string, MediaType>>;
}

export interface Operation {
  readonly operationId: string;
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content: Readonly<Record<string, MediaType>> };
  readonly responses: Readonly<Record<string, Response>>;
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
  /** The access level a session needs for the operation. */
  readonly 'x-session-level'?: string;
}

export const METHODS = ['get', 'post', 'put', 'delete'] as const;
export type Method = (typeof METHODS)[number];

export type PathItem = { readonly parameters?: readonly Parameter[] } & { readonly [M in Method]?: Operation };

export interface SecurityScheme { readonly type: string; readonly scheme?: string }

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, Schema>>;
    readonly parameters: Readonly<Record<string, Parameter>>;
    readonly responses: Readonly<Record<string, Response>>;
    readonly headers: Readonly<Record<string, Header>>;
    readonly securitySchemes: Readonly<Record<string, SecurityScheme>>;
  };
}

/** A parsed body as the OpenAPI document: asserts its version, paths and components. */
export function asDocument(body: unknown): OpenApiDocument {
  assert.ok(isObject(body) && typeof body.openapi === 'string' && isObject(body.paths) && isObject(body.components), 'not an OpenAPI document');
  return body as unknown as OpenApiDocument;
}
