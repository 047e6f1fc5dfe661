/**
 * `npm run bench -- --against <git-ref>`: the build of <git-ref> (the old one) and
 * the build of the current tree (the new one) served side by side with the same
 * environment and stand-ins, the same flows sent to both in rotating blocks
 * (scripts/bench/paired.ts), and each flow's server CPU per request on both, with
 * the ratio new/old and its spread. Both trees are built alike, each in a
 * directory of its own under the system's temp dir with a real node_modules
 * (Turbopack refuses a symlinked one); a tree built once is reused by the next run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { environmentWithoutServiceVariables } from '@/scripts/service-process';
import { fixed, markdownTable, pairedRatio, type Difference } from './figures';
import { benchFlows, preflightFlow, trivialFlow, type Flow } from './flows';
import { bareCallCpuMs, serviceEnv, startReady } from './measure';
import { pairedRun, type Block, type PairedConfiguration, type PairedFlow, type PairedSizes } from './paired';
import { commitOf, keep, loadAtStart, loadAverage, machineLine, nowUtc, progress, secondsSinceStart } from './session';
import { nextBin, REDIS_SERVER, ROOT, startRedis, startStandIns } from './world';

export const SECTION_TITLE = 'Before and after the subtraction';
export const BUILDS_DIR = join(tmpdir(), 'bench-against');
/** Written into a build directory once its `next build` succeeded: a directory without it is started over. */
const BUILT_MARK = '.bench-build-done';

const git = (args: string[], env: NodeJS.ProcessEnv = process.env): string =>
  execFileSync('git', args, { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();

export interface Build {
  /** "old" or "new". */
  side: string;
  /** What the build is of, in words: the ref and its commit, or the working tree. */
  source: string;
  /** The git tree it was made from. */
  tree: string;
  root: string;
}

/**
 * The working tree as it is now, tracked and untracked files alike (ignored ones left out), as a git
 * tree: staged in a copy of the index (its file times spare hashing the unchanged files), so neither
 * the branch nor its index changes.
 */
export function workingTree(): string {
  const index = join(tmpdir(), `bench-against-index-${process.pid}`);
  const env = { ...process.env, GIT_INDEX_FILE: index };
  try {
    copyFileSync(resolve(ROOT, git(['rev-parse', '--git-path', 'index'])), index);
    git(['add', '--all', '--', '.'], env);
    return git(['write-tree'], env);
  } finally {
    rmSync(index, { force: true });
  }
}

/** Runs a command to its end; its output is kept only to say why it failed. */
function runOrThrow(what: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${what} failed (exit ${result.status}):\n${`${result.stdout}${result.stderr}`.slice(-4000)}`);
}

/** What a build is made from (BUILD_SOURCES of scripts/service-process.ts, and package.json, which app/ imports). */
const BUILD_INPUTS = ['app', 'lib', 'instrumentation.ts', 'next.config.ts', 'package.json', 'package-lock.json', 'tsconfig.json'];

/** Two trees whose build inputs are the same share one build (a change to scripts/ alone builds nothing again). */
export const buildKey = (tree: string): string =>
  createHash('sha1').update(git(['ls-tree', tree, '--', ...BUILD_INPUTS])).digest('hex').slice(0, 16);

/**
 * The production build of `tree` in BUILDS_DIR/<its build key>: the files by git archive, node_modules copied from
 * this tree's when the lock files are the same (else `npm ci --prefer-offline`), then `next build` with the
 * service's variables left out of the environment, as for every build the bench compares.
 */
export function prepareBuild(side: string, source: string, tree: string): Build {
  const root = join(BUILDS_DIR, buildKey(tree));
  const build = { side, source, tree, root };
  if (existsSync(join(root, BUILT_MARK))) {
    progress(`${side} (${source}): built before in ${root}, reused`);
    return build;
  }
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const started = Date.now();
  const archive = `${root}.tar`;
  git(['archive', '--format=tar', '-o', archive, tree]);
  runOrThrow('tar', 'tar', ['-xf', archive, '-C', root], root);
  rmSync(archive, { force: true });
  const sameLock = readFileSync(join(root, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
  if (sameLock) {
    const installed = realpathSync(join(ROOT, 'node_modules'));
    runOrThrow('copying node_modules', 'cp', ['-a', '--reflink=auto', installed, join(root, 'node_modules')], root);
  } else {
    progress(`${side}: its package-lock.json differs from this tree's: npm ci --prefer-offline`);
    runOrThrow('npm ci', 'npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], root);
  }
  progress(`${side} (${source}): running \`next build\` in ${root} ...`);
  const env: NodeJS.ProcessEnv = { ...environmentWithoutServiceVariables(), NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' };
  runOrThrow(`next build of ${side}`, process.execPath, [nextBin(root), 'build'], root, env);
  writeFileSync(join(root, BUILT_MARK), `${source}\n`);
  progress(`${side}: ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return build;
}

// ---------------------------------------------------------------- the run

export interface AgainstOptions {
  ref: string;
  quick: boolean;
  sizes: PairedSizes;
  /** Only the flows whose name contains this (the 404 and the preflight always run: they are the floor). */
  flows?: string;
  bareCalls: number;
  serverWarmup: number;
  /** The other options the run was given, as typed (for the report's command line). */
  arguments: string[];
}

export interface AgainstReport {
  old: Build;
  new: Build;
  /** One comparison per environment: without Redis, and with a redis-server of its own per server when there is one. */
  environments: { label: string; oldKey: string; newKey: string }[];
  flows: PairedFlow[];
  sizes: PairedSizes;
  bareCallMs: number;
  quick: boolean;
  command: string;
}

export async function againstRun(options: AgainstOptions): Promise<AgainstReport> {
  progress(`--against ${options.ref}: ${machineLine()}, load average ${loadAverage()}`);
  const commit = git(['rev-parse', '--short', `${options.ref}^{commit}`]);
  const oldSource = commit.startsWith(options.ref) ? commit : `${options.ref} (${commit})`;
  const old = prepareBuild('old', oldSource, git(['rev-parse', `${options.ref}^{tree}`]));
  const current = prepareBuild('new', `the working tree at ${commitOf()}`, workingTree());
  const standIns = keep(await startStandIns());
  const withRedis = existsSync(REDIS_SERVER);
  if (!withRedis) progress(`${REDIS_SERVER} not found: both builds run without Redis only`);
  const environments = [
    { label: 'Without Redis', suffix: '', redis: false },
    ...(withRedis ? [{ label: 'With REDIS_URL (a redis-server of its own per server, on loopback)', suffix: '+redis', redis: true }] : []),
  ];
  // Before the servers start: it blocks this process for a while, and a keep-alive connection to a server
  // that timed out meanwhile would fail the first request after it.
  const bareCallMs = await bareCallCpuMs(standIns, options.bareCalls);
  progress(`one bare upstream call (its own process): ${fixed(bareCallMs)} ms CPU`);
  const specs = environments.flatMap((environment) =>
    [old, current].map((build) => ({ key: `${build.side}${environment.suffix}`, build, redis: environment.redis })),
  );
  progress(`starting ${specs.length} servers side by side (${specs.map((s) => s.key).join(', ')})`);
  const configurations: PairedConfiguration[] = await Promise.all(
    specs.map(async (spec) => {
      const redis = spec.redis ? keep(await startRedis()) : undefined;
      const env = serviceEnv(standIns, redis ? { REDIS_URL: redis.url } : {});
      const server = keep(await startReady(`against-${spec.key}`, standIns, env, [], options.serverWarmup, spec.build.root));
      return { key: spec.key, label: spec.build.source, server, ...(redis ? { redis } : {}) };
    }),
  );
  const selected = benchFlows().filter((flow) => !options.flows || flow.name.includes(options.flows));
  const flows: Flow[] = [trivialFlow, preflightFlow, ...selected];
  const results = await pairedRun(configurations, standIns, flows, options.sizes);
  for (const c of configurations) await c.server.close();
  return {
    old,
    new: current,
    environments: environments.map((e) => ({ label: e.label, oldKey: `old${e.suffix}`, newKey: `new${e.suffix}` })),
    flows: results,
    sizes: options.sizes,
    bareCallMs,
    quick: options.quick,
    command: ['npm run bench -- --against', options.ref, ...(options.quick ? ['--quick'] : []), ...options.arguments].join(' '),
  };
}

// ---------------------------------------------------------------- the report

const requestsOf = (blocks: readonly Block[]) => blocks.reduce((sum, b) => sum + b.latencies.length, 0);
const cpuPerRequest = (blocks: readonly Block[]) => blocks.reduce((sum, b) => sum + b.cpuMs, 0) / requestsOf(blocks);
const callsPerRequest = (blocks: readonly Block[]) => blocks.reduce((sum, b) => sum + b.upstreamCalls, 0) / requestsOf(blocks);

/** "lower", "higher", or "no difference seen" when the ratio's 5–95 % interval includes 1. */
export function ratioVerdict(ratio: Difference): string {
  if (!Number.isFinite(ratio.low) || !Number.isFinite(ratio.high)) return '–';
  if (ratio.high < 1) return 'lower';
  if (ratio.low > 1) return 'higher';
  return 'no difference seen';
}

const formatRatio = (r: Difference) => `${fixed(r.estimate)} (${fixed(r.low)} to ${fixed(r.high)})`;

/** The table of one environment: a row per flow, old against new. */
export function renderComparison(report: AgainstReport, oldKey: string, newKey: string): string {
  const blocksOf = (flow: PairedFlow, key: string) => flow.blocks.get(key) ?? [];
  const preflight = report.flows.find((f) => f.flow === preflightFlow.name);
  const floorOf = (flow: PairedFlow, key: string) =>
    (preflight ? cpuPerRequest(blocksOf(preflight, key)) : Number.NaN) + callsPerRequest(blocksOf(flow, key)) * report.bareCallMs;
  const verdicts = new Map<string, string[]>();
  const rows = report.flows.map((flow) => {
    const a = blocksOf(flow, oldKey);
    const b = blocksOf(flow, newKey);
    const ratio = pairedRatio(a, b, cpuPerRequest);
    // The 404 and the preflight are the floors, not flows: they get no "× floor" and stay out of the summary.
    const isFloor = flow.flow === trivialFlow.name || flow.flow === preflightFlow.name;
    if (!isFloor) verdicts.set(ratioVerdict(ratio), [...(verdicts.get(ratioVerdict(ratio)) ?? []), flow.flow]);
    return [
      flow.flow,
      `${fixed(callsPerRequest(a), 1)}, ${fixed(callsPerRequest(b), 1)}`,
      fixed(cpuPerRequest(a)),
      fixed(cpuPerRequest(b)),
      formatRatio(ratio),
      ratioVerdict(ratio),
      isFloor ? '–' : fixed(cpuPerRequest(a) / floorOf(flow, oldKey)),
      isFloor ? '–' : fixed(cpuPerRequest(b) / floorOf(flow, newKey)),
    ];
  });
  const header = ['flow', 'upstream calls/request old, new', 'CPU ms/request old', 'new', 'new / old (5–95 %)', 'new against old'];
  const flows = [...verdicts.values()].reduce((sum, names) => sum + names.length, 0);
  const summary = ['lower', 'no difference seen', 'higher']
    .filter((verdict) => verdicts.has(verdict))
    .map((verdict) => `${verdict}: ${verdicts.get(verdict)?.length} (${verdicts.get(verdict)?.join('; ')})`);
  return [
    markdownTable([...header, 'old × floor', 'new × floor'], rows),
    '',
    `New against old, of the ${flows} flows: ${summary.join('; ') || 'none measured'}.`,
  ].join('\n');
}

/** The "Before and after the subtraction" section of docs/benchmarks.md. */
export function renderAgainst(report: AgainstReport): string {
  const { sizes } = report;
  const out = [
    `## ${SECTION_TITLE}`,
    '',
    `Written by \`${report.command}\` (scripts/bench/against.ts). **Old**: ${report.old.source}; ` +
      `**new**: ${report.new.source}; git trees ${report.old.tree.slice(0, 12)} and ${report.new.tree.slice(0, 12)}. ` +
      'Each tree is built alike in a directory of its own (git archive, the same node_modules, `next build`), and both ' +
      '`next start` servers run at once against the same stand-ins with the same environment (the demo secrets; once ' +
      'without Redis and once with a redis-server of its own per server). Every flow, the 404 and the CORS preflight ' +
      `included, goes to all the servers in ${sizes.rounds} rounds of one block of ${sizes.blockSize} sequential requests ` +
      `per server in rotating order, after ${sizes.warmup} unmeasured requests per server (scripts/bench/paired.ts). ` +
      "CPU is the server's threads' time over each block (/proc/<pid>/task/*/schedstat). The ratio is new over old over " +
      'all rounds and, in parentheses, its 5th to 95th percentile over the rounds drawn again with replacement (1,000 ' +
      'draws, the same rounds for both): "lower" when the whole interval is below 1. A flow\'s floor, as in "Latest run", ' +
      "is the preflight's CPU on the same server plus its upstream calls × one bare upstream call " +
      `(${fixed(report.bareCallMs)} ms, scripts/bench/bare-calls.ts). The 404's row checks the harness: none of the ` +
      "service's code runs for it and Next.js is the same in both builds, so its ratio should be about 1; the preflight " +
      "runs the service's route wrapper and nothing else.",
    '',
    markdownTable(
      ['', ''],
      [
        ['date (UTC)', nowUtc()],
        ['mode', report.quick ? 'quick (small counts: the figures only show the harness works)' : 'full'],
        ['machine', `${machineLine()}, load average at start ${loadAtStart}, at the end ${loadAverage()}`],
        ['duration', `${secondsSinceStart().toFixed(0)} s`],
      ],
    ),
    '',
  ];
  for (const environment of report.environments) {
    out.push(`### ${environment.label}`, '', renderComparison(report, environment.oldKey, environment.newKey), '');
  }
  return out.join('\n');
}
