/**
 * The bench's paired comparisons (scripts/bench/figures.ts, paired.ts's
 * arithmetic) and its delay proxy (scripts/bench/delay-proxy.ts). No speed is
 * asserted: the proxy's test checks that bytes arrive whole, in order, and
 * never before the delay it was asked for, which holds on any machine.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ratioVerdict } from '@/scripts/bench/against';
import { formatDifference, pairedDifference, pairedRatio, rotatedOrder, verdict } from '@/scripts/bench/figures';
import { parseSchedstat } from '@/scripts/bench/process-stats';
import { delayListener, type DelayListener } from '@/scripts/bench/delay-proxy';
import { redisBudgetMs, TARGETS } from '@/scripts/bench/report';
import { PING_SPACING_MS, redisRoundTrips } from '@/scripts/bench/world';

describe('rotating block order', () => {
  it('puts every configuration in every position equally often over two laps', () => {
    for (const count of [2, 3, 5]) {
      const positions = Array.from({ length: count }, () => new Array<number>(count).fill(0));
      for (let round = 0; round < 2 * count; round += 1) {
        const order = rotatedOrder(count, round);
        expect([...order].sort()).toEqual(Array.from({ length: count }, (_, i) => i));
        order.forEach((configuration, position) => {
          const row = positions[configuration] as number[];
          row[position] = (row[position] ?? 0) + 1;
        });
      }
      for (const row of positions) expect(row).toEqual(new Array<number>(count).fill(2));
    }
  });

  it('is ABBA for two, so a steady drift falls on both alike', () => {
    expect([0, 1, 2, 3].map((round) => rotatedOrder(2, round).join(''))).toEqual(['01', '10', '10', '01']);
  });
});

describe('paired differences', () => {
  const mean = (blocks: readonly number[]) => blocks.reduce((a, b) => a + b, 0) / blocks.length;

  it('estimates the difference over all blocks and gives its spread over rounds', () => {
    // Each round's machine state moves both sides alike (the drift); the other side costs 2 more.
    const drift = [0, 5, 10, 3, 8, 1, 12, 6, 4, 9];
    const base = drift.map((d) => 10 + d);
    const other = drift.map((d, i) => 12 + d + (i % 2 === 0 ? 0.5 : -0.5));
    const difference = pairedDifference(base, other, mean);
    expect(difference.estimate).toBeCloseTo(2, 10);
    // Paired: the drift cancels, so the interval is as narrow as the ±0.5 noise, not the 12 of the drift.
    expect(difference.low).toBeGreaterThanOrEqual(1.5);
    expect(difference.high).toBeLessThanOrEqual(2.5);
    expect(difference.low).toBeLessThanOrEqual(2);
    expect(difference.high).toBeGreaterThanOrEqual(2);
  });

  it('draws the same rounds for both sides: unpaired draws would spread as wide as the drift', () => {
    const drift = [0, 20, 0, 20, 0, 20, 0, 20];
    const difference = pairedDifference(drift, drift.map((d) => d + 1), mean);
    expect(difference).toEqual({ estimate: 1, low: 1, high: 1 });
  });

  it('is the same for the same blocks (seeded), and refuses unpaired blocks', () => {
    const a = [1, 2, 3, 4, 5];
    const b = [2, 2, 5, 4, 9];
    expect(pairedDifference(a, b, mean)).toEqual(pairedDifference(a, b, mean));
    expect(() => pairedDifference(a, b.slice(1), mean)).toThrow(/as many/);
  });

  it('gives a ratio the same way, paired over rounds, and says lower only when its whole interval is below 1', () => {
    const drift = [0, 20, 0, 20, 0, 20, 0, 20];
    const old = drift.map((d) => 10 + d);
    const ratio = pairedRatio(old, old.map((v) => v * 0.8), mean);
    expect(ratio.estimate).toBeCloseTo(0.8, 10);
    expect(ratio.low).toBeCloseTo(0.8, 10);
    expect(ratio.high).toBeCloseTo(0.8, 10);
    expect(ratioVerdict(ratio)).toBe('lower');
    expect(ratioVerdict({ estimate: 1.2, low: 1.05, high: 1.3 })).toBe('higher');
    expect(ratioVerdict({ estimate: 0.97, low: 0.9, high: 1.02 })).toBe('no difference seen');
    expect(ratioVerdict({ estimate: Number.NaN, low: Number.NaN, high: Number.NaN })).toBe('–');
    expect(() => pairedRatio(old, old.slice(1), mean)).toThrow(/as many/);
  });

  it('prints a signed difference with its interval, and a verdict against a limit', () => {
    expect(formatDifference({ estimate: 1.25, low: -0.5, high: 2 })).toBe('+1.3 (-0.5 to +2.0)');
    expect(formatDifference({ estimate: Number.NaN, low: Number.NaN, high: Number.NaN })).toBe('– (– to –)');
    expect(verdict(1.1, 1.1)).toBe('met');
    expect(verdict(1.11, 1.1)).toBe('not met');
    expect(verdict(Number.NaN, 1.1)).toBe('–');
  });

  it('allows Redis two round trips and a millisecond', () => {
    expect(TARGETS.redisSlackMs).toBe(1);
    expect(redisBudgetMs(1)).toBe(3);
    expect(redisBudgetMs(2.1)).toBeCloseTo(5.2, 10);
  });
});

describe('schedstat', () => {
  it('reads the nanoseconds a thread ran, the first field', () => {
    expect(parseSchedstat('123456789 2000 17\n')).toBe(123456789);
    expect(() => parseSchedstat('')).toThrow();
  });
});

describe('the delay proxy', () => {
  let echo: Server | undefined;
  let proxy: DelayListener | undefined;
  const clients: Socket[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await proxy?.close();
    await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
    echo = undefined;
    proxy = undefined;
  });

  async function echoServer(): Promise<number> {
    const server = createServer((socket) => socket.pipe(socket));
    echo = server;
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  }

  it('forwards every byte in order both ways, and no round trip is shorter than asked', async () => {
    const roundTripMs = 30;
    proxy = await delayListener(await echoServer(), roundTripMs);
    const client = connect(proxy.port, '127.0.0.1');
    clients.push(client);
    await new Promise((resolve) => client.once('connect', resolve));
    const received: Buffer[] = [];
    let length = 0;
    let waiting: { bytes: number; resolve: () => void } | undefined;
    client.on('data', (chunk: Buffer) => {
      received.push(chunk);
      length += chunk.length;
      if (waiting && length >= waiting.bytes) waiting.resolve();
    });
    const until = (bytes: number) => new Promise<void>((resolve) => (waiting = { bytes, resolve }));

    // One small message: its echo comes back no sooner than the round trip (on loopback it takes well under a millisecond).
    const started = performance.now();
    client.write('x');
    await until(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(roundTripMs);

    // Then many pieces, so the proxy queues many chunks and must keep their order.
    const sent = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => i % 251));
    const all = until(1 + sent.length);
    for (let at = 0; at < sent.length; at += 1000) client.write(sent.subarray(at, at + 1000));
    await all;
    expect(Buffer.concat(received).equals(Buffer.concat([Buffer.from('x'), sent]))).toBe(true);
  });
});

describe('the round trip the bench reports for a Redis', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('is sampled as redis-cli --latency does, one PING at a time with a pause before each', async () => {
    const arrivals: number[] = [];
    server = createServer((socket: Socket) =>
      socket.on('data', () => {
        arrivals.push(performance.now());
        socket.write('+PONG\r\n');
      }),
    );
    const port = await new Promise<number>((resolve) => server?.listen(0, '127.0.0.1', () => resolve((server?.address() as { port: number }).port)));
    const times = await redisRoundTrips(port, 4);
    expect(times).toHaveLength(4);
    expect(arrivals).toHaveLength(4);
    // A timer may fire up to a millisecond early by the clock it is measured with; never sooner.
    for (let i = 1; i < arrivals.length; i += 1) expect((arrivals[i] as number) - (arrivals[i - 1] as number)).toBeGreaterThanOrEqual(PING_SPACING_MS - 1);
  });
});
