/**
 * A reader of the repository has the repository only: no comment or page may send them to a tracker's
 * issue by its number, or to a file beside the clone (a path that climbs out of it). A comment says the
 * reason itself, or cites the page that does (docs/decisions.md, docs/contract.md); those citations
 * must resolve too, which docs-links.test.ts checks.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const TEXT = /\.(ts|tsx|js|mjs|cjs|php|sh|md|txt|json|ya?ml|css|html)$|^\.ci\/|^\.env\.example$/;

/** The ways a text names what a clone does not hold. Built from parts, so this file does not match itself. */
const OUTSIDE = [
  { what: 'an issue number', pattern: new RegExp(['\\bissues?', '#?\\d+'].join(' '), 'i') },
  { what: 'a path beside the repository', pattern: new RegExp(['\\.\\.', 'shared', ''].join('/')) },
  { what: 'the spec folder beside the repository', pattern: new RegExp(['shared', 'spec', ''].join('/')) },
];

export function outsideReferences(path: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    // A number wrapped onto the comment's next line still names the issue.
    const wrapped = `${line} ${(lines[index + 1] ?? '').replace(/^\s*(\*|\/\/|#)?\s*/, '')}`;
    const issue = OUTSIDE[0]!;
    const hit = OUTSIDE.find(({ pattern }) => pattern.test(line)) ?? (/\bissues?\s*$/i.test(line) && issue.pattern.test(wrapped) ? issue : undefined);
    if (hit) found.push(`${path}:${index + 1} names ${hit.what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

function trackedTextFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((path) => path !== '' && path !== 'package-lock.json' && TEXT.test(path));
}

describe('no reference a clone cannot follow', () => {
  it('recognises each kind', () => {
    const issue = 'issue';
    const shared = ['shared', 'spec'].join('/');
    const sample = [
      `// see ${issue} 14 point 2`,
      ` * (${issue.toUpperCase()} #7): why`,
      `[spec](../${shared}/checkout-service.md)`,
      `// as written in ${shared}/DECISIONS.md`,
      `/* ${issue} 20 points 1, 2 and 4 */`,
      ` * costs a third of its fetch client (${issue}`,
      ` * 14, docs/benchmarks.md)`,
    ].join('\n');
    expect(outsideReferences('x.ts', sample)).toHaveLength(6);
    expect(outsideReferences('x.ts', '// docs/decisions.md#d12: receipts; zod issues, an issuer, tissue 4')).toEqual([]);
  });

  it('scans the tracked source and documentation', () => {
    const files = trackedTextFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'lib/config.ts', join('docs', 'decisions.md')]));
  });

  it('finds none in any tracked text file', () => {
    const found = trackedTextFiles().flatMap((path) => outsideReferences(path, readFileSync(join(ROOT, path), 'utf8')));
    expect(found).toEqual([]);
  });
});
