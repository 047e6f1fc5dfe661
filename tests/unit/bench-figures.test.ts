/**
 * The bench's pure arithmetic (scripts/bench/figures.ts, process-stats.ts):
 * what it reads from /proc and Redis, and how it turns samples into figures.
 * No timing is asserted here; `npm run bench` measures, this only checks
 * that what it computes is right.
 */
import { describe, expect, it } from 'vitest';
import { commandsBetween, markdownTable, parseCommandStats, percentile, replaceLatest, replaceSection, sequentialCalls, upstreamTimeMs } from '@/scripts/bench/figures';
import { descendants, parseProcStat, parseVmRssKb } from '@/scripts/bench/process-stats';

describe('/proc parsing', () => {
  it('reads pid, parent and CPU ticks, counting fields after the last parenthesis of the command name', () => {
    // A command name with a space and a parenthesis, as `next-server (v16.4.6)` has.
    const line =
      '4242 (next-server (v16.4.6)) S 4200 4242 4242 0 -1 4194560 61066 0 12 0 1234 567 8 9 20 0 11 0 1180466 1273085952 62046 18446744073709551615 1 1 0 0 0 0 0 4096 134234626 0 0 0 17 1 0 0 0 0 0';
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 4200, utime: 1234, stime: 567 });
    // A process may name itself anything, ") S 1 2" included.
    expect(parseProcStat('77 (a) S 1 2) R 76 77 77 0 -1 0 0 0 0 0 30 4 0 0 20 0 1 0 5 0 0')).toEqual({ pid: 77, ppid: 76, utime: 30, stime: 4 });
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => parseProcStat('not a stat line')).toThrow();
    expect(() => parseProcStat('12 (x) S 1')).toThrow(/field/);
  });

  it('reads VmRSS in kB, and nothing for a process without memory', () => {
    expect(parseVmRssKb('Name:\tnode\nVmPeak:\t 9999 kB\nVmRSS:\t  201232 kB\nRssAnon:\t 1 kB\n')).toBe(201232);
    expect(parseVmRssKb('Name:\tzombie\nState:\tZ (zombie)\n')).toBeUndefined();
  });

  it('finds every descendant of a process and nothing else', () => {
    const parents = new Map([
      [10, 1],
      [11, 10],
      [12, 11],
      [13, 10],
      [20, 1],
      [21, 20],
    ]);
    expect(descendants(10, parents).sort()).toEqual([10, 11, 12, 13]);
    expect(descendants(21, parents)).toEqual([21]);
  });
});

describe('percentiles', () => {
  it('is the nearest-rank percentile of unsorted values', () => {
    const values = [15, 20, 35, 40, 50];
    expect(percentile(values, 50)).toBe(35);
    expect(percentile(values, 30)).toBe(20);
    expect(percentile(values, 100)).toBe(50);
    expect(percentile(values, 0)).toBe(15);
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
  });

  it('is NaN for no values and refuses a percentile outside 0..100', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow();
  });
});

describe('sequential upstream calls', () => {
  it('counts calls made one after the other, and overlapping calls once', () => {
    expect(sequentialCalls([])).toBe(0);
    // get order, then create intent, then update order: three round trips.
    expect(sequentialCalls([{ start: 0, end: 40 }, { start: 41, end: 81 }, { start: 82, end: 122 }])).toBe(3);
    // Two calls in parallel, then one: two round trips, whatever the log order.
    expect(sequentialCalls([{ start: 45, end: 85 }, { start: 0, end: 40 }, { start: 1, end: 42 }])).toBe(2);
    // A call that starts exactly when the previous one ended came after it.
    expect(sequentialCalls([{ start: 0, end: 40 }, { start: 40, end: 80 }])).toBe(2);
  });

  it('measures the time spent waiting on upstreams: calls one after the other add up, overlapping ones count once', () => {
    expect(upstreamTimeMs([])).toBe(0);
    expect(upstreamTimeMs([{ start: 0, end: 41 }, { start: 45, end: 86.5 }])).toBe(82.5);
    // Two calls in parallel (0-40 and 1-42: together 0-42), then one of 40: 82, whatever the log order.
    expect(upstreamTimeMs([{ start: 45, end: 85 }, { start: 0, end: 40 }, { start: 1, end: 42 }])).toBe(82);
    // A call inside another adds nothing.
    expect(upstreamTimeMs([{ start: 0, end: 50 }, { start: 10, end: 20 }])).toBe(50);
  });
});

describe('Redis command counts', () => {
  it('reads INFO commandstats and counts the commands between two readings, without the bench\'s own INFO', () => {
    const before = parseCommandStats('# Commandstats\r\ncmdstat_info:calls=1,usec=50\r\ncmdstat_get:calls=5,usec=10,usec_per_call=2.00\r\n');
    const after = parseCommandStats(
      '# Commandstats\r\ncmdstat_info:calls=2,usec=90\r\ncmdstat_get:calls=8,usec=16\r\ncmdstat_set:calls=2,usec=4\r\ncmdstat_client|setinfo:calls=1,usec=1\r\n',
    );
    expect(after.get('get')).toBe(8);
    expect(after.get('client|setinfo')).toBe(1);
    expect(commandsBetween(before, after)).toBe(3 + 2 + 1);
  });

  it('leaves out the commands the bench sent itself between the readings (the PINGs that time the round trip)', () => {
    const before = parseCommandStats('cmdstat_ping:calls=1,usec=1\r\ncmdstat_evalsha:calls=10,usec=9\r\n');
    const after = parseCommandStats('cmdstat_ping:calls=22,usec=9\r\ncmdstat_evalsha:calls=14,usec=13\r\n');
    expect(commandsBetween(before, after, new Map([['ping', 20]]))).toBe(1 + 4);
  });
});

describe('the document', () => {
  it('prints a Markdown table', () => {
    expect(markdownTable(['a', 'b'], [['1', '2']])).toBe('| a | b |\n| --- | --- |\n| 1 | 2 |');
  });

  it('replaces the latest run and keeps the History part as people wrote it', () => {
    const previous = '# Benchmarks\n\nintro\n\n## Latest run\n\nold figures\n\n## History\n\n- 2026-11-20: cut X, 9.1 → 6.0 ms\n';
    const written = replaceLatest(previous, '# Benchmarks\n\nintro\n', '## Latest run\n\nnew figures');
    expect(written).toContain('new figures');
    expect(written).not.toContain('old figures');
    expect(written).toContain('## History\n\n- 2026-11-20: cut X, 9.1 → 6.0 ms');
    expect(replaceLatest(undefined, '# Benchmarks\n', '## Latest run\n\nfigures')).toMatch(/## Latest run[\s\S]*## History/);
  });

  it('the load mode writes its own section before the latest run, and replaces only that section later', () => {
    const previous = '# Benchmarks\n\nintro\n\n## Latest run\n\nfigures\n\n## History\n\nnotes\n';
    const first = replaceSection(previous, 'Load test', '## Load test\n\nload 1', 'Latest run');
    expect(first).toBe('# Benchmarks\n\nintro\n\n## Load test\n\nload 1\n\n## Latest run\n\nfigures\n\n## History\n\nnotes\n');
    const second = replaceSection(first, 'Load test', '## Load test\n\nload 2', 'Latest run');
    expect(second).toBe(first.replace('load 1', 'load 2'));
    // The main run keeps everything before "## Latest run" as its intro, the load section with it.
    expect(replaceLatest(second, second.slice(0, second.indexOf('## Latest run')), '## Latest run\n\nnew')).toContain('load 2');
  });
});
