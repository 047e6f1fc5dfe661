/**
 * Layers that only point down (docs/architecture.md): every file of app/ and
 * lib/ belongs to one layer, and may import from its own layer or the ones
 * below it, never from one above. Imports are read with the TypeScript
 * compiler's own pre-processor, so `import`, `import type`, `export … from`
 * and `import()` all count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Top to bottom. A path ending in `/` is a folder (with everything under it), any other a file. */
const LAYERS: { name: string; paths: string[] }[] = [
  { name: 'app routes', paths: ['app/'] },
  { name: 'route families and start-up', paths: ['lib/routes/', 'lib/openapi/', 'lib/startup.ts', 'lib/preload.ts'] },
  { name: 'use cases', paths: ['lib/checkout/', 'lib/webhooks/', 'lib/store-callbacks/', 'lib/cron/', 'lib/health/'] },
  { name: 'services', paths: ['lib/services.ts'] },
  { name: 'domain', paths: ['lib/orders/', 'lib/money.ts'] },
  { name: 'adapters', paths: ['lib/store/', 'lib/card/', 'lib/shipping/', 'lib/shared-state/', 'lib/redis/'] },
  {
    name: 'platform',
    paths: [
      'lib/http/',
      'lib/log.ts',
      'lib/config.ts',
      'lib/errors.ts',
      'lib/order-id.ts',
      'lib/order-statuses.ts',
      'lib/telemetry.ts',
      'lib/upstream/',
      'lib/security/',
    ],
  },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/** The layer's index (0 is the top), or undefined for a file no layer holds. */
function layerOf(file: string): number | undefined {
  const index = LAYERS.findIndex((layer) => layer.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
  return index === -1 ? undefined : index;
}

/** The repository file an import names, or undefined for a package. */
function target(from: string, specifier: string): string | undefined {
  let resolved: string;
  if (specifier.startsWith('@/')) resolved = specifier.slice(2);
  else if (specifier.startsWith('.')) resolved = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  else return undefined;
  return /\.[a-z]+$/.test(resolved) ? resolved : `${resolved}.ts`;
}

export interface UpwardImport {
  file: string;
  imports: string;
  from: string;
  to: string;
}

/** Every import of the given files that points to a higher layer. */
export function upwardImports(files: string[], read: (file: string) => string): UpwardImport[] {
  const found: UpwardImport[] = [];
  for (const file of files) {
    const own = layerOf(file);
    if (own === undefined) continue;
    for (const { fileName } of ts.preProcessFile(read(file), true, true).importedFiles) {
      const imported = target(file, fileName);
      const theirs = imported === undefined ? undefined : layerOf(imported);
      if (imported === undefined || theirs === undefined || theirs >= own) continue;
      found.push({ file, imports: imported, from: LAYERS[own]!.name, to: LAYERS[theirs]!.name });
    }
  }
  return found;
}

const files = [...sourceFiles('app'), ...sourceFiles('lib')];
const readSource = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('layers', () => {
  it('places every file of app/ and lib/ in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('places no path in two layers', () => {
    expect(files.filter((file) => LAYERS.filter((layer) => layer.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p))).length > 1)).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    expect(upwardImports(files, readSource)).toEqual([]);
  });

  it('sees an upward import in each form a file can write one', () => {
    const sources: Record<string, string> = {
      'lib/errors.ts': "import { getServices } from '@/lib/services';",
      'lib/money.ts': "import type { Store } from '@/lib/store/types';\nexport type { Services } from '@/lib/services';",
      'lib/store/types.ts': "const stripe = () => import('../card/stripe');\nconst page = () => import('@/lib/routes/checkout');",
    };
    expect(upwardImports(Object.keys(sources), (file) => sources[file]!).map(({ file, imports }) => `${file} -> ${imports}`)).toEqual([
      'lib/errors.ts -> lib/services.ts',
      'lib/money.ts -> lib/services.ts',
      'lib/store/types.ts -> lib/routes/checkout.ts',
    ]);
  });
});
