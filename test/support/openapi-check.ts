// Checks real answers against the OpenAPI document: finds the operation a request
// meant, the response documented for the status, and validates the body with
// Ajv (OpenAPI 3.1 schemas are JSON Schema 2020-12) and the headers by name.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { isObject } from './api.ts';
import { type Method, METHODS, type OpenApiDocument, type Operation, type Response, type Schema } from './openapi-doc.ts';

/** One answer as a client saw it. */
export interface Exchange {
  readonly method: string;
  /** The request path as sent (raw). */
  readonly path: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly text: string;
  /** The request body as sent, when there was one. */
  readonly requestBody?: string;
}

export interface Verdict {
  /** The operation the request meant, or null for one the document has none for (an unknown endpoint, a verb not served). */
  readonly operationId: string | null;
  readonly status: number;
  readonly problems: readonly string[];
}

/** Headers the service sends whose names the document must declare where they occur. */
const DECLARED_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit', 'etag'];

const pointer = (parts: readonly string[]) =>
  `#/${parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

/** The reference an object of the document is, if it is one. */
const refIn = (v: unknown): string | undefined => (isObject(v) && typeof v.$ref === 'string' ? v.$ref : undefined);

/** An operation of the document: its path template, method and operation. */
export interface Located { readonly template: string; readonly method: Method; readonly op: Operation }

export class ResponseChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    // OpenAPI's own members at the top of the document are not schema keywords.
    this.ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, validateSchema: false });
    addFormats.default(this.ajv);
    this.ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'security', 'paths', 'components']);
    this.ajv.addSchema(doc, 'openapi');
  }

  /** Every operation of the document: path template, method and operation. */
  *operations(): Generator<Located> {
    for (const [template, item] of Object.entries(this.doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (op) yield { template, method, op };
      }
    }
  }

  /**
   * The operation a request meant: its endpoint and verb, on the path with or
   * without segments after the endpoint (an update sent without filters is
   * still the update, refused).
   */
  operationFor(method: string, rawPath: string): Located | null {
    const verb = (method === 'HEAD' ? 'get' : method.toLowerCase());
    const path = rawPath.split('?')[0]!;
    const parts = path.split('/').filter((p) => p !== '');
    const candidates = [...this.operations()].filter((o) => o.method === verb);
    if (parts[0] !== '3.0') return candidates.find((o) => o.template === path) ?? null;
    const endpoint = parts[1];
    const mine = candidates.filter((o) => o.template.split('/')[2] === endpoint);
    const hasSegments = parts.length > 2;
    return mine.find((o) => o.template.includes('{') === hasSegments) ?? mine[0] ?? null;
  }

  /** What an object of the document stands for: itself, or (following references) the object of the same kind it names. */
  private deref<T extends { readonly $ref?: string }>(o: T): T {
    let out = o;
    while (out.$ref !== undefined) out = this.at(out.$ref) as T;
    return out;
  }

  private at(ref: string): unknown {
    return ref.slice(2).split('/').map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), this.doc);
  }

  private validator(ref: string): ValidateFunction {
    let v = this.validators.get(ref);
    if (!v) this.validators.set(ref, (v = this.ajv.compile({ $ref: `openapi${ref}` })));
    return v;
  }

  /** Where the response of an operation for a status is, as a JSON pointer (following response references). */
  private responseRef({ template, method, op }: Located, status: number): string | null {
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => op.responses[k]);
    if (!key) return null;
    let ref = pointer(['paths', template, method, 'responses', key]);
    for (let next = refIn(this.at(ref)); next !== undefined; next = refIn(this.at(ref))) ref = next;
    return ref;
  }

  check(x: Exchange): Verdict {
    const problems: string[] = [];
    const found = this.operationFor(x.method, x.path);
    const where = `${x.method} ${x.path} → ${x.status}`;
    const contentType = String(x.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!found) {
      // Not an operation: it can only be a refusal with the error body.
      if (x.status < 400) problems.push(`${where}: a success for a request the document has no operation for`);
      if (x.method !== 'HEAD') this.validate('#/components/schemas/Error', x, problems, where);
      return { operationId: null, status: x.status, problems };
    }
    const id = found.op.operationId;
    this.checkRequest(found, x, problems, where);
    const ref = this.responseRef(found, x.status);
    if (!ref) return { operationId: id, status: x.status, problems: [`${where}: ${id} documents no response ${x.status}`] };
    const response = this.deref(this.at(ref) as Response);
    const headers = Object.entries(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), this.deref(h)] as const);
    for (const [name, h] of headers) if (h.required && x.headers[name] === undefined) problems.push(`${where}: header ${name} missing`);
    for (const name of DECLARED_HEADERS) {
      if (x.headers[name] !== undefined && !headers.some(([n]) => n === name)) problems.push(`${where}: header ${name} not documented`);
    }
    const content = response.content ?? {};
    if (x.method === 'HEAD') return { operationId: id, status: x.status, problems };
    if (Object.keys(content).length === 0) {
      if (x.text !== '') problems.push(`${where}: a body where the document has none`);
    } else if (!(contentType in content)) {
      problems.push(`${where}: content type "${contentType}" not documented (${Object.keys(content).join(', ')})`);
    } else if (contentType === 'application/json') {
      this.validate(`${ref}/content/application~1json/schema`, x, problems, where);
    }
    return { operationId: id, status: x.status, problems };
  }

  /**
   * A JSON body the service took must fit the operation's request schema; one it
   * refused for the wrong shape, or for a field the schema does not list, must not.
   * (A listed field refused to this caller, or a value refused for what it names,
   * such as an id that does not exist, are beyond what a schema can say.)
   */
  private checkRequest({ template, method, op }: Located, x: Exchange, problems: string[], where: string): void {
    const schemaAt = ['paths', template, method, 'requestBody', 'content', 'application/json', 'schema'];
    const json = op.requestBody?.content['application/json'];
    if (x.requestBody === undefined || !json) return;
    let body: unknown;
    let answer: unknown;
    try {
      body = JSON.parse(x.requestBody);
      answer = x.status >= 400 ? JSON.parse(x.text) : undefined;
    } catch {
      return;
    }
    const reply = isObject(answer) && isObject(answer.response) ? answer.response : undefined;
    const error = reply && { code: typeof reply.code === 'string' ? reply.code : undefined, error: String(reply.error) };
    const v = this.validator(pointer(schemaAt));
    const fits = v(body);
    if (x.status < 300 && !fits) problems.push(`${where}: the body taken does not fit the request schema: ${this.ajv.errorsText(v.errors)}`);
    const field = error?.code === 'invalid_field' ? String(error.error).replace('Field verification failed, invalid field ', '') : null;
    const unlisted = field !== null && !this.fieldsOf(json.schema).has(field);
    // (Nesting too deep for the parser is malformed JSON too, and no schema keyword bounds depth.)
    const shape = error?.code === 'malformed_json' && !String(error.error).includes('too deep');
    if (fits && (shape || unlisted)) problems.push(`${where}: the body refused (${error?.code}) fits the request schema`);
  }

  /** The member names an object schema (or the objects of its alternatives) lists. */
  private fieldsOf(schema: Schema): Set<string> {
    const s = this.deref(schema);
    const alternatives = [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.items ? [s.items] : [])].map((a) => this.fieldsOf(a));
    return new Set([...Object.keys(s.properties ?? {}), ...alternatives.flatMap((a) => [...a])]);
  }

  private validate(ref: string, x: Exchange, problems: string[], where: string): void {
    let body: unknown;
    try {
      body = JSON.parse(x.text);
    } catch {
      problems.push(`${where}: body is not JSON: ${x.text.slice(0, 200)}`);
      return;
    }
    const v = this.validator(ref);
    if (!v(body)) problems.push(`${where}: ${this.ajv.errorsText(v.errors, { separator: '; ' })}: ${x.text.slice(0, 400)}`);
  }
}
