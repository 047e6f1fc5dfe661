/**
 * `npm run build:client`: bundles client/index.ts into one dependency-free ESM
 * file, client/dist/storefront-client.js. The client imports only types from
 * the service, so nothing but its own code may end up in the bundle: the build
 * fails if any other input does (zod leaking in through a value import, say).
 */
import { build, type BuildResult } from 'esbuild';
import { fileURLToPath } from 'node:url';

export const CLIENT_ENTRY = fileURLToPath(new URL('../client/index.ts', import.meta.url));
export const CLIENT_BUNDLE = fileURLToPath(new URL('../client/dist/storefront-client.js', import.meta.url));

export async function buildClient(outfile = CLIENT_BUNDLE): Promise<BuildResult<{ metafile: true }>> {
  const result = await build({
    entryPoints: [CLIENT_ENTRY],
    outfile,
    bundle: true,
    format: 'esm',
    // Browsers and Node alike: no Node built-ins, no DOM assumptions beyond fetch.
    platform: 'neutral',
    target: 'es2022',
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs);
  if (inputs.length !== 1 || !inputs[0]!.endsWith('client/index.ts')) {
    throw new Error(`the storefront client must bundle only client/index.ts, got: ${inputs.join(', ')}`);
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildClient();
  console.log(`wrote ${CLIENT_BUNDLE}`);
}
