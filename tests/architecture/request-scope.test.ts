/**
 * A request carries one AsyncLocalStorage (lib/request-scope.ts): its id, route, deadline, store caller and
 * deferred rate-limit hit. Another scope would be another frame and another lookup on every request.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the request scope', () => {
  it('is the only AsyncLocalStorage in lib/', () => {
    const scopes = readdirSync(path.join(ROOT, 'lib'), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
      .flatMap((file) => (readFileSync(path.join(ROOT, file), 'utf8').match(/new AsyncLocalStorage\b/g) ?? []).map(() => file));
    expect(scopes).toEqual(['lib/request-scope.ts']);
  });
});
