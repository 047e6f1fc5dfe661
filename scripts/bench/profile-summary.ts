/**
 * Reads the .cpuprofile files `node --cpu-prof` wrote for the server and says
 * where its CPU went: self time by origin (Node.js internals, Next.js, each
 * package, the app's own chunks, garbage collection, idle) and the heaviest
 * functions, each as a share of the busy (non-idle) time. A CPU profile is
 * relative, so the shares mean something even on a busy machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function comes from: a package, Next.js, the app's bundle, Node.js itself. */
export function originOf(url: string, functionName: string): string {
  if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') return functionName;
  if (url === '' ) return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const packagePath = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packagePath) {
    const name = packagePath[1] as string;
    // Next.js compiles its own copies of several packages (next/dist/compiled/...).
    const compiled = /next\/dist\/compiled\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    return compiled ? `next (compiled ${compiled[1]})` : name;
  }
  if (url.includes('/.next/server/chunks/')) return 'app chunks (.next/server/chunks)';
  if (url.includes('/.next/server/')) return 'app route (.next/server/app)';
  return url;
}

export interface ProfileShares {
  busyMs: number;
  byOrigin: [string, number][];
  byFunction: [string, number][];
}

/** Self time per origin and per function over every profile in `dir`, in ms. */
export function summarizeProfiles(dir: string): ProfileShares {
  const byOrigin = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyMs = 0;
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((id, index) => {
      const node = nodes.get(id);
      if (!node) return;
      const ms = (profile.timeDeltas[index] ?? 0) / 1000;
      const { functionName, url, lineNumber } = node.callFrame;
      const origin = originOf(url, functionName);
      if (origin === '(idle)') return;
      busyMs += ms;
      byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + ms);
      const where = url ? `${url.replace(/^.*\/(node_modules|\.next)\//, '$1/')}:${lineNumber + 1}` : '';
      const key = `${functionName || '(anonymous)'} ${where}`.trim();
      byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
    });
  }
  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return { busyMs, byOrigin: sorted(byOrigin), byFunction: sorted(byFunction) };
}

export function renderShares(shares: ProfileShares, functions = 40): string {
  const percent = (ms: number) => `${((ms / shares.busyMs) * 100).toFixed(1).padStart(5)} %`;
  return [
    `busy (non-idle) samples: ${shares.busyMs.toFixed(0)} ms`,
    '',
    'self time by origin:',
    ...shares.byOrigin.map(([origin, ms]) => `  ${percent(ms)}  ${origin}`),
    '',
    `heaviest ${functions} functions (self time):`,
    ...shares.byFunction.slice(0, functions).map(([name, ms]) => `  ${percent(ms)}  ${name}`),
  ].join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: tsx scripts/bench/profile-summary.ts <dir of .cpuprofile files>');
  console.log(renderShares(summarizeProfiles(dir)));
}
