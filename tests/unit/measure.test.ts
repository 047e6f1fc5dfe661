import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countLines, measureDir, report } from '@/scripts/measure';

const SAMPLE = [
  '/**',
  ' * A JSDoc header.',
  ' */',
  "import { x } from './x'; // a trailing comment on code",
  '',
  '/* a block comment on one line */',
  'const url = "https://example.com/*not a comment*/";',
  "const path = '//also not a comment';",
  'const tpl = `line one // inside a template',
  '/* still inside the template */',
  '${url} end`;',
  'const re = /\\/*$/;',
  'const half = 4 / 2; /* a comment after code',
  '   that goes on */',
  '',
  '  // an indented line comment',
  'export const y = { a: `${"//"}` };',
].join('\n');

describe('line counting', () => {
  it('counts comment-only lines as comments and lines with code as code, whatever strings, templates and regexes hold', () => {
    expect(countLines(SAMPLE)).toEqual({ code: 9, comment: 6, blank: 2 });
  });

  it('reads a // or /* inside a string as code, not as the start of a comment', () => {
    expect(countLines(`const a = '/*';\nconst b = 1;`)).toEqual({ code: 2, comment: 0, blank: 0 });
    expect(countLines(`const a = "//";\n// note`)).toEqual({ code: 1, comment: 1, blank: 0 });
  });

  it('counts every line of a JSDoc block, and a blank line within it as blank', () => {
    expect(countLines('/**\n * one\n\n * two\n */\nf();')).toEqual({ code: 1, comment: 4, blank: 1 });
  });
});

describe('the report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'measure-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sums a folder, gives the comment share of non-blank lines and flags a file over 350 lines', () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'small.ts'), '// why\nconst a = 1;\n\nconst b = 2;\n');
    writeFileSync(join(dir, 'sub', 'big.ts'), 'x();\n'.repeat(351));
    writeFileSync(join(dir, 'notes.md'), '// not counted\n');
    const files = measureDir(dir);
    expect(files.map((f) => f.path).sort()).toEqual(['small.ts', join('sub', 'big.ts')]);
    const text = report(files);
    expect(text).toContain('2 files, 355 lines');
    expect(text).toContain('code lines     353');
    expect(text).toContain('comment lines  1 (0.3 % of non-blank lines)');
    expect(text).toContain('blank lines    1');
    expect(text).toMatch(/351 code\s+351 lines {2}sub\/big\.ts {2}> 350/);
    expect(text).not.toMatch(/small\.ts {2}>/);
  });
});
