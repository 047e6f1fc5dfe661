/**
 * `npm run build:client`: builds the storefront client package (client/package.json) into client/dist:
 * index.js (dependency-free ESM, browsers and servers), server.js (token minting over jose) and their .d.ts.
 * The build fails if anything but the client's own files would end up in it (the service's lib/, zod).
 */
import { build, type BuildResult } from 'esbuild';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLIENT_DIR = fileURLToPath(new URL('../client/', import.meta.url));
export const CLIENT_DIST = fileURLToPath(new URL('../client/dist/', import.meta.url));
const ENTRIES = ['index.ts', 'server.ts'].map((file) => `${CLIENT_DIR}${file}`);

export async function buildClient(outDir = CLIENT_DIST): Promise<BuildResult<{ metafile: true }>> {
  const result = await build({
    entryPoints: ENTRIES,
    outdir: outDir,
    bundle: true,
    format: 'esm',
    // Browsers and Node alike: no Node built-ins, no DOM assumptions beyond fetch.
    platform: 'neutral',
    target: 'es2022',
    // The server entry's one dependency, declared in client/package.json.
    external: ['jose'],
    // Inputs are named from the repository's root, wherever the build is started from.
    absWorkingDir: ROOT,
    metafile: true,
    logLevel: 'warning',
  });
  const foreign = Object.keys(result.metafile.inputs).filter((input) => !/^client\/[^/]+\.ts$/.test(input));
  if (foreign.length > 0) throw new Error(`the storefront client must bundle only its own files, got: ${foreign.join(', ')}`);
  emitDeclarations(outDir);
  return result;
}

/** The .d.ts files, from the client's sources alone: a type imported from anywhere else fails the build. */
function emitDeclarations(outDir: string): void {
  const program = ts.createProgram(ENTRIES, {
    declaration: true,
    emitDeclarationOnly: true,
    outDir,
    rootDir: CLIENT_DIR,
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    skipLibCheck: true,
    types: [],
  });
  const outside = program.getSourceFiles().filter((file) => !file.fileName.includes('/node_modules/') && !file.fileName.startsWith(CLIENT_DIR));
  const emitted = program.emit();
  const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (outside.length > 0 || problems.length > 0) {
    const text = ts.formatDiagnostics(problems, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => CLIENT_DIR, getNewLine: () => '\n' });
    throw new Error(`the storefront client's types do not build on their own${outside.length > 0 ? ` (imports ${outside.map((file) => relative(CLIENT_DIR, file.fileName)).join(', ')})` : ''}:\n${text}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildClient();
  console.log(`wrote ${CLIENT_DIST}`);
}
