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

/**
 * Commands run between two readings, leaving out the bench's own INFO and the
 * commands it sent itself in between (`benchOwn`, e.g. the PINGs that measure
 * the round trip), so only the service's commands are counted.
 */
export function commandsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  benchOwn: ReadonlyMap<string, number> = new Map(),
): number {
  let total = 0;
  for (const [command, calls] of after) {
    if (command === 'info') continue;
    total += calls - (before.get(command) ?? 0) - (benchOwn.get(command) ?? 0);
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

/** A seeded pseudo-random sequence in [0, 1), so two runs draw the same numbers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * The order in which `count` configurations send their blocks in round
 * `round`: rotated by one each round, and reversed on every other lap, so each
 * configuration goes first, last and in between equally often and a machine
 * that gets busier (or quieter) during the run moves every configuration alike
 * (for two: AB, BA, BA, AB, ...).
 */
export function rotatedOrder(count: number, round: number): number[] {
  const shift = round % count;
  const order = Array.from({ length: count }, (_, i) => (i + shift) % count);
  return Math.floor(round / count) % 2 === 1 ? order.reverse() : order;
}

export interface Difference {
  /** statistic(other) − statistic(base), over all the blocks. */
  estimate: number;
  /** The 5th and 95th percentiles of the same difference over blocks drawn again with replacement. */
  low: number;
  high: number;
}

/**
 * The difference of a statistic between two configurations measured in
 * paired blocks (block i of both sent in the same round, next to each other),
 * with its spread: a bootstrap over rounds, each draw taking the same rounds
 * for both sides so that what a round's machine state did to both cancels.
 */
export function pairedDifference<B>(
  base: readonly B[],
  other: readonly B[],
  statistic: (blocks: readonly B[]) => number,
  draws = 1000,
  seed = 1,
): Difference {
  return pairedBootstrap(base, other, statistic, (a, b) => b - a, draws, seed);
}

/** The same as pairedDifference for statistic(other) / statistic(base): e.g. the new build's CPU over the old one's. */
export function pairedRatio<B>(
  base: readonly B[],
  other: readonly B[],
  statistic: (blocks: readonly B[]) => number,
  draws = 1000,
  seed = 1,
): Difference {
  return pairedBootstrap(base, other, statistic, (a, b) => b / a, draws, seed);
}

function pairedBootstrap<B>(
  base: readonly B[],
  other: readonly B[],
  statistic: (blocks: readonly B[]) => number,
  compare: (base: number, other: number) => number,
  draws: number,
  seed: number,
): Difference {
  if (base.length !== other.length) throw new Error('paired blocks must be as many on both sides');
  const estimate = compare(statistic(base), statistic(other));
  if (base.length === 0) return { estimate, low: Number.NaN, high: Number.NaN };
  const next = seededRandom(seed);
  const drawn: number[] = [];
  for (let draw = 0; draw < draws; draw += 1) {
    const picked = Array.from({ length: base.length }, () => Math.floor(next() * base.length));
    drawn.push(compare(statistic(picked.map((i) => base[i] as B)), statistic(picked.map((i) => other[i] as B))));
  }
  return { estimate, low: percentile(drawn, 5), high: percentile(drawn, 95) };
}

/** "1.2 (0.8 to 1.9)": a difference and its spread, signed. */
export function formatDifference(difference: Difference, digits = 1): string {
  const signed = (value: number) => (Number.isFinite(value) ? `${value > 0 ? '+' : ''}${value.toFixed(digits)}` : '–');
  return `${signed(difference.estimate)} (${signed(difference.low)} to ${signed(difference.high)})`;
}

/** "met" or "not met" for a figure against its limit (at most), "–" when there is no figure. */
export function verdict(value: number, limit: number): string {
  if (!Number.isFinite(value)) return '–';
  return value <= limit ? 'met' : 'not met';
}
