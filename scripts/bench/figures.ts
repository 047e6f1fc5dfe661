/**
 * The arithmetic of the bench: percentiles, sequential upstream calls read
 * from a request log, ratios and how they are printed. Pure, and tested in
 * tests/unit/bench-figures.test.ts.
 */

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new Error('percentile must be between 0 and 100');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export interface Interval {
  start: number;
  end: number;
}

/**
 * How many upstream calls one request made one after the other: calls that
 * overlap in time ran in parallel and count once, so this is the number of
 * groups of overlapping intervals. With a fixed upstream latency L, no
 * request can answer faster than this count × L: the round-trip floor.
 */
export function sequentialCalls(calls: readonly Interval[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  let groups = 0;
  let groupEnd = Number.NEGATIVE_INFINITY;
  for (const call of sorted) {
    if (call.start >= groupEnd) {
      groups += 1;
      groupEnd = call.end;
    } else {
      groupEnd = Math.max(groupEnd, call.end);
    }
  }
  return groups;
}

/**
 * How long one request waited on its upstreams, as the upstreams saw it: the
 * length of the union of the calls' intervals (overlapping calls count once).
 * A proxy told to answer after L answers a little later (its timer, the
 * stand-in's work on a busy machine), so this is at least the count × L, and
 * what no service could answer faster than.
 */
export function upstreamTimeMs(calls: readonly Interval[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  let total = 0;
  let groupStart = Number.NaN;
  let groupEnd = Number.NEGATIVE_INFINITY;
  for (const call of sorted) {
    if (call.start >= groupEnd) {
      if (Number.isFinite(groupEnd)) total += groupEnd - groupStart;
      groupStart = call.start;
      groupEnd = call.end;
    } else {
      groupEnd = Math.max(groupEnd, call.end);
    }
  }
  if (Number.isFinite(groupEnd)) total += groupEnd - groupStart;
  return total;
}

/** Redis INFO commandstats: `cmdstat_get:calls=5,usec=...` lines → {get: 5}. */
export function parseCommandStats(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(match[1] as string, Number(match[2]));
  return counts;
}

/** Commands run between two readings, leaving out the bench's own INFO. */
export function commandsBetween(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    total += calls - (before.get(command) ?? 0);
  }
  return total;
}

export function ratio(value: number, base: number): number {
  return base > 0 ? value / base : Number.NaN;
}

export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

/** A Markdown table; numbers are expected already formatted. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The Markdown document with its generated part replaced and everything from
 * the `## History` heading on kept as it was (people write there).
 */
export function replaceLatest(previous: string | undefined, intro: string, latest: string): string {
  const historyAt = previous?.search(/^## History\b/m) ?? -1;
  const history =
    previous && historyAt >= 0
      ? previous.slice(historyAt).trimEnd()
      : '## History\n\nBefore and after of each change that moved a figure, newest first (copy the rows that moved from "Latest run" above, with the commit).';
  return `${intro.trimEnd()}\n\n${latest.trimEnd()}\n\n${history}\n`;
}

/**
 * The document with its `## <title>` section (up to the next `## ` heading)
 * replaced by `section`, or with `section` put before `## <before>` when it has
 * none yet: a mode of the bench that writes its own part of the document
 * leaves the rest as it was.
 */
export function replaceSection(previous: string, title: string, section: string, before: string): string {
  const heading = (text: string) => new RegExp(`^## ${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm');
  const at = previous.search(heading(title));
  if (at >= 0) {
    const rest = previous.slice(at + 3);
    const next = rest.search(/^## /m);
    const end = next >= 0 ? at + 3 + next : previous.length;
    return `${previous.slice(0, at)}${section.trimEnd()}\n\n${previous.slice(end)}`;
  }
  const beforeAt = previous.search(heading(before));
  if (beforeAt < 0) return `${previous.trimEnd()}\n\n${section.trimEnd()}\n`;
  return `${previous.slice(0, beforeAt)}${section.trimEnd()}\n\n${previous.slice(beforeAt)}`;
}
