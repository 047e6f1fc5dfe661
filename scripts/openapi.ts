/**
 * `npm run openapi`: writes docs/openapi.json from the zod schemas
 * (scripts/openapi-document/document.ts). A test fails while the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPENAPI_FILE, serializedOpenApiDocument } from '@/scripts/openapi-document/file';

writeFileSync(fileURLToPath(OPENAPI_FILE), serializedOpenApiDocument());
console.log(`wrote ${fileURLToPath(OPENAPI_FILE)}`);
