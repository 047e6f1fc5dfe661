/**
 * What the kernel says about the server: CPU time and resident memory of a
 * process and everything it started, read from /proc (Linux only).
 *
 * `next start` may serve from a child process, so the bench always sums the
 * whole tree under the pid it spawned; a tree is re-read at every sample
 * because workers can come and go.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  ppid: number;
  /** Clock ticks spent in user mode (field 14 of /proc/<pid>/stat). */
  utime: number;
  /** Clock ticks spent in kernel mode (field 15). */
  stime: number;
}

/**
 * Parses one /proc/<pid>/stat line. The command name (field 2) is in
 * parentheses and may itself hold spaces and parentheses, so fields are
 * counted from the LAST closing parenthesis.
 */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error('not a /proc/<pid>/stat line');
  const pid = Number(text.slice(0, open).trim());
  // After ") ": field 3 (state) is index 0, so field N is index N - 3.
  const fields = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => {
    const value = Number(fields[n - 3]);
    if (!Number.isFinite(value)) throw new Error(`field ${n} missing in /proc/<pid>/stat`);
    return value;
  };
  return { pid, ppid: field(4), utime: field(14), stime: field(15) };
}

/** VmRSS from a /proc/<pid>/status text, in kB; undefined for a process without memory (a zombie). */
export function parseVmRssKb(status: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) : undefined;
}

/** The pids of `root` and all its descendants, given every process's parent. */
export function descendants(root: number, parents: ReadonlyMap<number, number>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // gone between listing and reading
  }
}

export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) parents.set(stat.pid, stat.ppid);
  }
  return descendants(root, parents);
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU of the process tree under `root`, in milliseconds. */
export function treeCpuMs(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    const stat = readStat(pid);
    if (stat) ticks += stat.utime + stat.stime;
  }
  return (ticks * 1000) / clockTicks();
}

/** Resident memory of the process tree under `root`, in kB. */
export function treeRssKb(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) {
    try {
      total += parseVmRssKb(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? 0;
    } catch {
      // gone
    }
  }
  return total;
}

/** One line per process of the tree, for the report: "pid ppid command". */
export function describeTree(root: number): string[] {
  return processTree(root).map((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      return `${pid} ${cmd.map((part) => part.replace(/^.*node_modules\//, '')).join(' ').slice(0, 120)}`;
    } catch {
      return `${pid} (gone)`;
    }
  });
}

/** Nanoseconds a thread has run on a CPU: the first field of /proc/<pid>/task/<tid>/schedstat. */
export function parseSchedstat(text: string): number {
  const first = text.trim().split(/\s+/)[0] ?? '';
  if (!/^\d+$/.test(first)) throw new Error('not a schedstat line');
  return Number(first);
}

/**
 * CPU time of the given processes' threads, in milliseconds, from schedstat:
 * nanoseconds, where /proc/<pid>/stat counts clock ticks (10 ms), so a block
 * of a few requests can be measured on its own. Threads that exited since the
 * last reading drop out of the sum, so the caller reads the same processes
 * before and after and keeps the blocks short.
 */
export function threadsCpuMs(pids: readonly number[]): number {
  let ns = 0;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        ns += parseSchedstat(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
      } catch {
        // gone between listing and reading
      }
    }
  }
  return ns / 1e6;
}
