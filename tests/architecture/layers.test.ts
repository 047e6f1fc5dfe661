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
  { name: 'route families and start-up', paths: ['lib/routes/', 'lib/startup.ts', 'lib/preload.ts'] },
  {
    name: 'use cases',
    paths: ['lib/checkout/', 'lib/webhooks/', 'lib/shipments/', 'lib/store-callbacks/', 'lib/card-payments/', 'lib/cron/', 'lib/health/'],
  },
  { name: 'services', paths: ['lib/services.ts'] },
  { name: 'domain', paths: ['lib/orders/', 'lib/money.ts'] },
  { name: 'adapters', paths: ['lib/store/', 'lib/card/', 'lib/shipping/', 'lib/shared-state/', 'lib/redis/'] },
  {
    name: 'platform',
    paths: [
      'lib/http/',
      'lib/log.ts',
      'lib/request-scope.ts',
      'lib/config.ts',
      'lib/errors.ts',
      'lib/order-id.ts',
      'lib/order-statuses.ts',
      'lib/shipment-notices.ts',
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

/** The repository files each file imports (packages left out), in every form `upwardImports` reads. */
function importGraph(files: string[], read: (file: string) => string): Map<string, string[]> {
  return new Map(
    files.map((file) => [
      file,
      ts.preProcessFile(read(file), true, true).importedFiles.flatMap(({ fileName }) => {
        const imported = target(file, fileName);
        return imported === undefined || imported === file ? [] : [imported];
      }),
    ]),
  );
}

/** Groups of nodes that reach one another (Tarjan's strongly connected components), each sorted, larger than one. */
function loops(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      group.push(member);
    } while (member !== node);
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Files of lib/ that import one another, directly or around a circle. */
export function importCircles(files: string[], read: (file: string) => string): string[][] {
  return loops(importGraph(files.filter((file) => file.startsWith('lib/')), read));
}

/** The folder of lib/ a file is in (`lib/shipping`), or undefined for a file directly in lib/. */
function folderOf(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'lib' && parts.length > 2 ? `lib/${parts[1]}` : undefined;
}

/** Folders of lib/ that import one another, directly or around a circle of folders. */
export function folderLoops(files: string[], read: (file: string) => string): string[][] {
  const folders = new Map<string, string[]>();
  for (const [file, imports] of importGraph(files, read)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    const targets = folders.get(from) ?? [];
    for (const imported of imports) {
      const to = folderOf(imported);
      if (to !== undefined && to !== from && !targets.includes(to)) targets.push(to);
    }
    folders.set(from, targets);
  }
  for (const targets of [...folders.values()]) for (const to of targets) if (!folders.has(to)) folders.set(to, []);
  return loops(folders);
}

/** The file and names each `import … from` and `export … from` of a file brings in (a renamed binding counts under its original name). */
function namedImports(file: string, source: string): { imported: string; names: string[] }[] {
  const found: { imported: string; names: string[] }[] = [];
  for (const statement of ts.createSourceFile(file, source, ts.ScriptTarget.Latest).statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
    const specifier = statement.moduleSpecifier;
    const imported = specifier && ts.isStringLiteral(specifier) ? target(file, specifier.text) : undefined;
    if (imported === undefined) continue;
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    const bindings = ts.isImportDeclaration(statement) ? clause?.namedBindings : statement.exportClause;
    const elements = bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)) ? [...bindings.elements] : [];
    const names = elements.map((element) => (element.propertyName ?? element.name).text);
    found.push({ imported, names: clause?.name ? [clause.name.text, ...names] : names });
  }
  return found;
}

/**
 * Shared state is reached through `Services` (docs/architecture.md): a use case imports
 * neither lib/redis/ nor a `Redis…` name of shared state.
 */
export function useCaseRedisImports(files: string[], read: (file: string) => string): string[] {
  const useCases = LAYERS.findIndex((layer) => layer.name === 'use cases');
  return files
    .filter((file) => layerOf(file) === useCases)
    .flatMap((file) => [
      ...importGraph([file], read)
        .get(file)!
        .filter((imported) => imported.startsWith('lib/redis/') || imported === 'lib/shared-state/request-redis.ts')
        .map((imported) => `${file} -> ${imported}`),
      ...namedImports(file, read(file))
        .filter(({ imported }) => imported.startsWith('lib/shared-state/'))
        .flatMap(({ imported, names }) => names.filter((name) => name.startsWith('Redis')).map((name) => `${file} -> ${imported} ${name}`)),
    ]);
}

/** Folder loops that are known and left for the restructurings that remove them; none may be added. */
const KNOWN_FOLDER_LOOPS: string[][] = [];

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

  it('has no import circle between files of lib/', () => {
    expect(importCircles(files, readSource)).toEqual([]);
  });

  it('has no loop between folders of lib/ beyond the known ones', () => {
    const known = KNOWN_FOLDER_LOOPS.map((loop) => loop.join(' '));
    expect(folderLoops(files, readSource).filter((loop) => !known.includes(loop.join(' ')))).toEqual([]);
  });

  it('has no use case that imports Redis', () => {
    expect(useCaseRedisImports(files, readSource)).toEqual([]);
  });

  it('sees an import circle, a folder loop and a use case naming Redis', () => {
    const sources: Record<string, string> = {
      'lib/shipping/a.ts': "import type { B } from '@/lib/shipping/b';\nimport { budget } from '@/lib/shared-state/budget/x';",
      'lib/shipping/b.ts': "export type { A } from './a';",
      'lib/shared-state/budget/x.ts': "const a = () => import('@/lib/shared-state/queue/y');",
      'lib/shared-state/queue/y.ts': "import type { Notice } from '@/lib/shipping/c';",
      'lib/shipping/c.ts': 'export {};',
      'lib/health/health.ts':
        "import { getRedisConnection } from '@/lib/redis/connection';\n" +
        "import { type RedisCursorStore as Store, MemoryCursorStore } from '../shared-state/cursor';\n" +
        "export { RedisShippedStatus } from '@/lib/shared-state/shipped-status';\n" +
        "import type { SlotUsage } from '@/lib/shared-state/store-slots';",
    };
    const read = (file: string) => sources[file] ?? '';
    expect(importCircles(Object.keys(sources), read)).toEqual([['lib/shipping/a.ts', 'lib/shipping/b.ts']]);
    expect(folderLoops(Object.keys(sources), read)).toEqual([['lib/shared-state', 'lib/shipping']]);
    expect(useCaseRedisImports(Object.keys(sources), read)).toEqual([
      'lib/health/health.ts -> lib/redis/connection.ts',
      'lib/health/health.ts -> lib/shared-state/cursor.ts RedisCursorStore',
      'lib/health/health.ts -> lib/shared-state/shipped-status.ts RedisShippedStatus',
    ]);
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
