/**
 * Where the stand-ins sit in the import graph: the service's own code (app/,
 * lib/, instrumentation.ts) never imports them, so none of their code or
 * demo secrets can reach the production bundle; and among themselves they
 * import without a circle, so each file can be read (and loaded) after the
 * ones it needs.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(folder: string): string[] {
  const absolute = join(ROOT, folder);
  if (statSync(absolute).isFile()) return [folder];
  return (readdirSync(absolute, { recursive: true }) as string[])
    .filter((name) => /\.(ts|tsx|mjs)$/.test(name))
    .map((name) => join(folder, name));
}

/** The files a source file imports, as paths from the repository root (without the extension). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');
  return specifiers
    .filter((specifier) => specifier.startsWith('.') || specifier.startsWith('@/'))
    .map((specifier) =>
      specifier.startsWith('@/') ? normalize(specifier.slice(2)) : relative(ROOT, join(ROOT, dirname(file), specifier)),
    )
    .map((path) => path.replace(/\.(ts|tsx|mjs)$/, ''));
}

describe('the stand-ins in the import graph', () => {
  it('are imported by no file of the service itself', () => {
    const service = [...sourceFiles('app'), ...sourceFiles('lib'), ...sourceFiles('instrumentation.ts')];
    expect(service.length).toBeGreaterThan(50);
    const reaching = service.flatMap((file) =>
      importsOf(file)
        .filter((target) => target === 'stand-ins' || target.startsWith(`stand-ins/`))
        .map((target) => `${file} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it('import one another without a circle', () => {
    const files = sourceFiles('stand-ins').map((file) => file.replace(/\.(ts|tsx|mjs)$/, ''));
    const graph = new Map(files.map((file) => [file, importsOf(`${file}.ts`).filter((target) => files.includes(target))]));
    expect(graph.size).toBeGreaterThan(10);
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), file, next].join(' -> '));
        else if (!state.has(next)) visit(next, [...path, file]);
      }
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file, []);
    expect(circles).toEqual([]);
  });
});
