/**
 * Says, after vitest's own summary, which tests were skipped and why: a reader
 * looks at the end of the run, and "53 skipped" alone does not say whether
 * something is broken or merely not set up (vitest.config.ts adds it to the
 * default reporter).
 *
 * The reason of a skipped test is the "(skipped: …)" its name or a suite's name
 * carries; a test in a file built on tests/support/redis.ts is skipped because
 * REDIS_URL is not set when that is the case; any other is listed by file.
 * Nothing is printed when nothing was skipped, so a full run (.ci/run, with
 * Redis) still ends on vitest's own summary lines.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { REDIS_SKIP_REASON } from './redis-global-setup';

// The reason may hold one level of parentheses; a name vitest shortened (describe.each's $name) ends in "…".
const LABEL = /\(skipped: ([^()]*(?:\([^()]*\)[^()]*)*)\)/;
// A file that reads noRedis or REDIS_URL from tests/support/redis.ts skips its Redis tests without it.
const REDIS_SUPPORT = /import\s*\{[^}]*\b(?:noRedis|REDIS_URL)\b[^}]*\}\s*from\s*['"][^'"]*support\/redis['"]/;

/** The reason a name carries: the test's own, else its nearest suite's. */
function labelled(test: TestCase): string | undefined {
  for (let node: TestCase['parent'] | TestCase = test; node.type !== 'module'; node = node.parent) {
    const match = LABEL.exec(node.name);
    if (match?.[1] && !match[1].includes('…')) return match[1].trim();
  }
  return undefined;
}

function usesRedisSupport(module: TestModule, cache: Map<string, boolean>): boolean {
  let uses = cache.get(module.moduleId);
  if (uses === undefined) {
    try {
      uses = REDIS_SUPPORT.test(readFileSync(module.moduleId, 'utf8'));
    } catch {
      uses = false;
    }
    cache.set(module.moduleId, uses);
  }
  return uses;
}

/** Skipped tests grouped by reason, each with the files they are in. */
export function skippedByReason(
  modules: ReadonlyArray<TestModule>,
  env: { redisUrl: string | undefined; nameFilter?: string | undefined },
  root = process.cwd(),
): Map<string, Map<string, number>> {
  // A run told to select tests by name (-t) skips the others: said as such, not as a condition of their file.
  const otherwise = env.nameFilter ? `not selected by the name filter (-t ${env.nameFilter})` : 'skipped by a condition in the file, without a stated reason';
  const groups = new Map<string, Map<string, number>>();
  const redisFiles = new Map<string, boolean>();
  for (const module of modules) {
    const file = relative(root, module.moduleId);
    for (const test of module.children.allTests('skipped')) {
      if (test.options.mode === 'todo') continue;
      const reason =
        labelled(test) ??
        (!env.redisUrl && usesRedisSupport(module, redisFiles) ? REDIS_SKIP_REASON : otherwise);
      const files = groups.get(reason) ?? new Map<string, number>();
      files.set(file, (files.get(file) ?? 0) + 1);
      groups.set(reason, files);
    }
  }
  return groups;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** The closing lines: one paragraph per reason, the largest group first. */
export function skipSummary(groups: Map<string, Map<string, number>>): string {
  const paragraphs = [...groups]
    .map(([reason, files]) => ({ reason, files, count: [...files.values()].reduce((a, b) => a + b, 0) }))
    .sort((a, b) => b.count - a.count)
    .map(({ reason, files, count }) => {
      const where = [...files].map(([file, n]) => `${file} (${n})`).join(', ');
      return `  ${plural(count, 'test')} in ${plural(files.size, 'file')}: ${reason}\n    ${where}`;
    });
  if (paragraphs.length === 0) return '';
  const total = [...groups.values()].reduce((sum, files) => sum + [...files.values()].reduce((a, b) => a + b, 0), 0);
  return `\n Skipped  ${plural(total, 'test')}, and why:\n${paragraphs.join('\n')}\n`;
}

export default class SkipSummaryReporter implements Reporter {
  private nameFilter: string | undefined;

  onInit(vitest: Vitest): void {
    const pattern = vitest.config.testNamePattern;
    this.nameFilter = pattern ? String(pattern) : undefined;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const summary = skipSummary(skippedByReason(testModules, { redisUrl: process.env.REDIS_URL, nameFilter: this.nameFilter }));
    if (summary) process.stdout.write(summary);
  }
}
