/** docs/openapi.json: where the document is committed, and its exact text. */
import { buildOpenApiDocument } from './document';

export const OPENAPI_FILE = new URL('../../docs/openapi.json', import.meta.url);

export function serializedOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
