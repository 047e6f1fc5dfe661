/**
 * Checks real responses against the OpenAPI document (docs/openapi.json's
 * source, scripts/openapi-document/document.ts): status, JSON body and required headers are
 * validated with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1), and
 * every checked response is recorded so a test can tell which documented
 * responses it never saw.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { buildOpenApiDocument } from '@/scripts/openapi-document/document';

type JsonObject = Record<string, any>;

const DOCUMENT_ID = 'https://contract.test/openapi.json';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const openApiDocument = buildOpenApiDocument() as JsonObject;

/** zod writes JSON Schema 2020-12; strict mode would refuse the document's own keywords (openapi, paths). */
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema(openApiDocument, DOCUMENT_ID);

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function resolve(node: JsonObject): JsonObject {
  if (typeof node.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce<JsonObject>((at, part) => at[part.replaceAll('~1', '/').replaceAll('~0', '~')], openApiDocument);
}

/** Every documented response, as `METHOD path status`. */
export function documentedResponses(): string[] {
  const all: string[] = [];
  for (const [path, item] of Object.entries(openApiDocument.paths as JsonObject)) {
    for (const [method, operation] of Object.entries(item as JsonObject)) {
      for (const status of Object.keys((operation as JsonObject).responses)) all.push(`${method.toUpperCase()} ${path} ${status}`);
    }
  }
  return all.sort();
}

const seen = new Set<string>();

export function checkedResponses(): string[] {
  return [...seen].sort();
}

/**
 * Asserts that the response is one the document describes for this operation,
 * with a body and headers that match, and returns the parsed body.
 */
export async function expectDocumentedResponse(method: string, path: string, response: Response): Promise<unknown> {
  const operation = openApiDocument.paths[path]?.[method.toLowerCase()] as JsonObject | undefined;
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const status = String(response.status);
  const documented = operation!.responses[status] as JsonObject | undefined;
  expect(documented, `${method} ${path} documents status ${status}`).toBeDefined();
  seen.add(`${method.toUpperCase()} ${path} ${status}`);

  for (const [name, header] of Object.entries((documented!.headers ?? {}) as JsonObject)) {
    const definition = resolve(header);
    const value = response.headers.get(name);
    if (definition.required) expect(value, `header ${name} on ${status}`).not.toBeNull();
    if (value !== null) {
      const validate = ajv.compile(definition.schema);
      expect(validate(value) ? [] : validate.errors, `header ${name}: ${value}`).toEqual([]);
    }
  }

  const text = await response.text();
  if (!documented!.content) {
    expect(text, `${method} ${path} ${status} has no body`).toBe('');
    return undefined;
  }
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as unknown;
  const schemaPointer = pointer('paths', path, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema');
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${schemaPointer}` });
  expect(validate(body) ? [] : validate.errors, `${method} ${path} ${status} body ${text}`).toEqual([]);
  return body;
}
