/**
 * npm run measure: the weight of lib/ (docs/architecture.md's targets): code lines (non-blank, non-comment),
 * comment lines and their share of non-blank lines, blank lines, files, and the largest files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LineCounts {
  code: number;
  comment: number;
  blank: number;
}

/** A file over this many lines is flagged. */
export const LINE_LIMIT = 350;

/** After these characters a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = /[(,=:[!&|?{};+\-*%<>~^]$|^$|\b(?:return|typeof|case|in|of|void|yield|await)$/;

/**
 * Counts a TypeScript source's lines: a line with any code on it is code, a line holding only comment
 * text is a comment, an empty one blank. Strings, template literals and regular expressions are read
 * as code, so a `//` or `/*` inside them starts no comment.
 */
export function countLines(source: string): LineCounts {
  const counts: LineCounts = { code: 0, comment: 0, blank: 0 };
  let inBlock = false;
  /** Open template literals, each with the brace depth of its `${` expression when in one. */
  const templates: number[] = [];
  let braces = 0;
  for (const line of source.split(/\r?\n/)) {
    let code = false;
    let comment = inBlock;
    let i = 0;
    let before = '';
    while (i < line.length) {
      const c = line[i]!;
      if (inBlock) {
        if (line.startsWith('*/', i)) {
          inBlock = false;
          i += 2;
        } else i += 1;
        continue;
      }
      if (templates.length > 0 && templates.at(-1) === -1) {
        // Inside a template literal's text.
        code = true;
        if (c === '\\') i += 2;
        else if (c === '`') {
          templates.pop();
          i += 1;
        } else if (line.startsWith('${', i)) {
          templates[templates.length - 1] = braces;
          braces += 1;
          i += 2;
        } else i += 1;
        continue;
      }
      if (/\s/.test(c)) {
        i += 1;
        continue;
      }
      if (line.startsWith('//', i)) {
        comment = true;
        break;
      }
      if (line.startsWith('/*', i)) {
        comment = true;
        inBlock = true;
        i += 2;
        continue;
      }
      code = true;
      if (c === '"' || c === "'") {
        i = endOfQuoted(line, i, c);
      } else if (c === '`') {
        templates.push(-1);
        i += 1;
      } else if (c === '/' && BEFORE_REGEX.test(before.trimEnd())) {
        i = endOfRegex(line, i);
      } else {
        if (c === '{') braces += 1;
        if (c === '}') {
          braces -= 1;
          if (templates.length > 0 && templates.at(-1) === braces) templates[templates.length - 1] = -1;
        }
        i += 1;
      }
      before = line.slice(0, i);
    }
    if (code) counts.code += 1;
    else if (comment && line.trim() !== '') counts.comment += 1;
    else counts.blank += 1;
  }
  return counts;
}

function endOfQuoted(line: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < line.length && line[i] !== quote) i += line[i] === '\\' ? 2 : 1;
  return i + 1;
}

function endOfRegex(line: string, start: number): number {
  let i = start + 1;
  let inClass = false;
  while (i < line.length) {
    const c = line[i]!;
    if (c === '\\') i += 2;
    else {
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) return i + 1;
      i += 1;
    }
  }
  return i;
}

export interface FileMeasure extends LineCounts {
  path: string;
  lines: number;
}

/** Every .ts and .tsx file under dir, measured. */
export function measureDir(dir: string, root = dir): FileMeasure[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return measureDir(path, root);
    if (!/\.tsx?$/.test(entry.name)) return [];
    const text = readFileSync(path, 'utf8');
    const lines = text.endsWith('\n') ? text.slice(0, -1) : text;
    return [{ path: relative(root, path), lines: lines.split(/\r?\n/).length, ...countLines(lines) }];
  });
}

export function report(files: readonly FileMeasure[], dirName = 'lib/'): string {
  const sum = (key: keyof LineCounts) => files.reduce((total, file) => total + file[key], 0);
  const [code, comment, blank] = [sum('code'), sum('comment'), sum('blank')];
  const share = code + comment === 0 ? 0 : (100 * comment) / (code + comment);
  const largest = [...files].sort((a, b) => b.code - a.code).slice(0, 10);
  const over = files.filter((file) => file.lines > LINE_LIMIT);
  return [
    `${dirName}: ${files.length} files, ${code + comment + blank} lines`,
    `  code lines     ${code}`,
    `  comment lines  ${comment} (${share.toFixed(1)} % of non-blank lines)`,
    `  blank lines    ${blank}`,
    `Largest files by code lines (lines over ${LINE_LIMIT} flagged):`,
    ...largest.map((file) => `  ${String(file.code).padStart(5)} code ${String(file.lines).padStart(5)} lines  ${file.path}${file.lines > LINE_LIMIT ? `  > ${LINE_LIMIT}` : ''}`),
    `Files over ${LINE_LIMIT} lines: ${over.length === 0 ? 'none' : over.map((file) => `${file.path} (${file.lines})`).join(', ')}`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(report(measureDir(join(process.cwd(), 'lib'))));
}
