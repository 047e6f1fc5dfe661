/**
 * Every relative link in README.md and docs/ resolves inside the repository: to a file that exists
 * and, for a link into a Markdown page, to a heading or `<a id>` anchor that page has. A clone is
 * all a reader has, so a link out of the tree (or to a section renamed since) is a broken page.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
/** Pages the index links to that are written on another branch; remove an entry once its page is merged. */
function markdownFiles(): string[] {
  const files = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n');
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a (?:id|name)="([^"]+)"/g)) if (match[1]) anchors.add(match[1]);
  return anchors;
}

export function linksOf(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].flatMap((match) => (match[1] ? [match[1]] : []));
}

interface Broken {
  file: string;
  link: string;
  why: string;
}

function brokenLinks(): Broken[] {
  const broken: Broken[] = [];
  for (const file of markdownFiles()) {
    const markdown = readFileSync(file, 'utf8');
    for (const link of linksOf(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: not a path in the tree
      const [path, anchor] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = relative(ROOT, target);
      const report = (why: string) => broken.push({ file: relative(ROOT, file), link, why });
      if (where.startsWith('..') || where.split(sep)[0] === '..') report('points outside the repository');
      else if (!existsSync(target)) report('no such file');
      else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) report('no such anchor');
    }
  }
  return broken;
}

/** `docs/….md#anchor` as code comments cite it (docs/decisions.md#d12), in every tracked source file. */
function brokenCitations(): Broken[] {
  const broken: Broken[] = [];
  const sources = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((path) => /\.(ts|tsx|js|mjs|php|sh)$|^\.env\.example$/.test(path));
  for (const file of sources) {
    for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(/\bdocs\/[\w/.-]+?\.md(?:#[\w-]+)?/g)) {
      const [path, anchor] = match[0].split('#', 2) as [string, string | undefined];
      const target = join(ROOT, path);
      const report = (why: string) => broken.push({ file, link: match[0], why });
      if (!existsSync(target)) report('no such file');
      else if (anchor && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) report('no such anchor');
    }
  }
  return broken;
}

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    const files = markdownFiles().map((file) => relative(ROOT, file));
    expect(files).toEqual(expect.arrayContaining(['README.md', join('docs', 'README.md'), join('docs', 'decisions.md')]));
    expect(linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });

  it('reads anchors as GitHub makes them', () => {
    expect(slug('Store shielding (`STORE_MAX_CONCURRENCY`)')).toBe('store-shielding-store_max_concurrency');
    expect(slug('What is queued, and what is not')).toBe('what-is-queued-and-what-is-not');
    expect([...anchorsOf('## A\n## A\n<a id="d12"></a>\n```\n## not a heading\n```\n')]).toEqual(['a', 'a-1', 'd12']);
  });

  it('resolves every relative link of README.md and docs/ to a file (and anchor) in the repository', () => {
    expect(brokenLinks()).toEqual([]);
  });

  it('resolves every docs/ page and anchor a code comment cites', () => {
    expect(brokenCitations()).toEqual([]);
  });
});
