import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const CHECK = fileURLToPath(new URL('./storefront-client-types.check.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The project's own compiler options, for one file and what it imports. */
function diagnosticsOf(file: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(`${ROOT}tsconfig.json`, { incremental: false }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram([file], { ...config.options, incremental: false, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the storefront client package', () => {
  it('declares request and response types that the service’s schemas accept both ways', () => {
    expect(diagnosticsOf(CHECK)).toEqual([]);
  }, 60_000);
});
