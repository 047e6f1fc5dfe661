/**
 * Comparisons between configurations that can be trusted on a shared
 * machine: every configuration's server runs at once, and each flow's
 * requests go to them in rounds of short blocks (one block per configuration
 * per round, one request at a time, the order rotating from round to round:
 * figures.ts rotatedOrder), so whatever the machine does during the run falls
 * on all of them alike. Measured one after the other on fresh servers, the
 * same flow moved by up to 5 ms between two runs, more than Redis adds.
 *
 * Each block records its latencies and the server's CPU time over it (threads'
 * schedstat, nanoseconds). A difference to the base configuration is reported
 * with its spread, a bootstrap over rounds (figures.ts pairedDifference).
 */
import { aroundFlow, type BenchRequest, type Flow } from './flows';
import { commandsBetween, median, rotatedOrder } from './figures';
import { checkLeftOrders, contextFor, controlOf, send } from './measure';
import { processTree, threadsCpuMs } from './process-stats';
import { progress } from './session';
import { redisRoundTrips, type RedisProcess, type ServerProcess, type StandInsProcess } from './world';

export interface PairedConfiguration {
  key: string;
  label: string;
  server: ServerProcess;
  /** Its own redis-server, when it has one: the commands it ran are counted. */
  redis?: RedisProcess;
  /** The round trip to its Redis as measured (PING), when it has one. */
  redisRoundTripMs?: number;
  /** The round trip the delay proxy was asked for, when its Redis is reached through one. */
  delayedRoundTripMs?: number;
  /** The port the server reaches its Redis on (the proxy's, when delayed): PINGed between rounds. */
  redisPort?: number;
}

export interface Block {
  latencies: number[];
  cpuMs: number;
  /** Calls the block's requests made to the stand-ins (read from their call log after the block). */
  upstreamCalls: number;
}

export interface PairedFlow {
  flow: string;
  /** By configuration key: its blocks, block i of every configuration sent in round i. */
  blocks: Map<string, Block[]>;
  /** Redis commands per request, by configuration key (those with a Redis of their own). */
  redisCommands: Map<string, number>;
}

/** Round trips to each configuration's Redis, by key: PINGs sent between the rounds, so taken as the flows ran. */
export type RoundTrips = Map<string, number[]>;

/** PINGs per configuration with a Redis after each round. */
const PINGS_PER_ROUND = 10;

export interface PairedSizes {
  rounds: number;
  blockSize: number;
  warmup: number;
}

/** Runs every flow on every configuration in rotating blocks. */
export async function pairedRun(
  configurations: readonly PairedConfiguration[],
  standIns: StandInsProcess,
  flows: readonly Flow[],
  sizes: PairedSizes,
  roundTrips: RoundTrips = new Map(),
): Promise<PairedFlow[]> {
  const control = controlOf(standIns);
  // The server's process tree is read once: listing /proc at every block would cost more than a block.
  const trees = new Map(configurations.map((c) => [c.key, processTree(c.server.pid)]));
  const results: PairedFlow[] = [];
  for (const flow of flows) {
    const contexts = configurations.map((c) => contextFor(c.server, control));
    const first = contexts[0];
    if (!first) throw new Error('paired run without configurations');
    const result = await aroundFlow(flow, first, async () => {
      const measured = sizes.rounds * sizes.blockSize;
      const prepared: BenchRequest[][] = [];
      for (const context of contexts) prepared.push(await flow.prepare(sizes.warmup + measured, context));
      // The warm-up of each configuration, in turn, unmeasured: the JIT's first requests cost more.
      for (let i = 0; i < sizes.warmup; i += 1) {
        for (const [index, configuration] of configurations.entries()) {
          const status = await send(configuration.server.url, prepared[index]?.[i] as BenchRequest);
          if (status !== flow.status) throw new Error(`${flow.name} on ${configuration.key}, warming up: expected ${flow.status}, got ${status}`);
        }
      }
      const commandsBefore = await Promise.all(configurations.map((c) => c.redis?.commandCounts()));
      const blocks = new Map<string, Block[]>(configurations.map((c) => [c.key, []]));
      await control.calls(); // forget the calls made while preparing and warming up
      for (let round = 0; round < sizes.rounds; round += 1) {
        for (const index of rotatedOrder(configurations.length, round)) {
          const configuration = configurations[index] as PairedConfiguration;
          const requests = (prepared[index] as BenchRequest[]).slice(
            sizes.warmup + round * sizes.blockSize,
            sizes.warmup + (round + 1) * sizes.blockSize,
          );
          const tree = trees.get(configuration.key) as number[];
          const latencies: number[] = [];
          const cpuBefore = threadsCpuMs(tree);
          for (const request of requests) {
            const started = performance.now();
            const status = await send(configuration.server.url, request);
            latencies.push(performance.now() - started);
            if (status !== flow.status) throw new Error(`${flow.name} on ${configuration.key}: expected ${flow.status}, got ${status}`);
          }
          const cpuMs = threadsCpuMs(tree) - cpuBefore;
          const upstreamCalls = (await control.calls()).length;
          (blocks.get(configuration.key) as Block[]).push({ latencies, cpuMs, upstreamCalls });
        }
        for (const configuration of configurations) {
          if (configuration.redisPort === undefined) continue;
          const times = await redisRoundTrips(configuration.redisPort, PINGS_PER_ROUND);
          roundTrips.set(configuration.key, [...(roundTrips.get(configuration.key) ?? []), ...times]);
        }
      }
      const commandsAfter = await Promise.all(configurations.map((c) => c.redis?.commandCounts()));
      const redisCommands = new Map<string, number>();
      for (const [index, configuration] of configurations.entries()) {
        const before = commandsBefore[index];
        const after = commandsAfter[index];
        // The PINGs this bench sent between the rounds are its own, not the service's.
        const pings = new Map([['ping', sizes.rounds * PINGS_PER_ROUND]]);
        if (before && after) redisCommands.set(configuration.key, commandsBetween(before, after, pings) / measured);
      }
      return { flow: flow.name, blocks, redisCommands };
    });
    await checkLeftOrders(flow, control);
    results.push(result);
    progress(
      `  ${flow.name}: p50 ` +
        configurations.map((c) => `${c.key} ${median((result.blocks.get(c.key) ?? []).flatMap((b) => b.latencies)).toFixed(1)}`).join(', ') +
        ' ms',
    );
  }
  return results;
}
