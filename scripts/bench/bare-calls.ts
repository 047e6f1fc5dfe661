/**
 * The floor of one upstream call: `count` sequential GETs with Node's own
 * http client on a keep-alive agent, nothing else in the process, and the CPU
 * time they took (user + system, this process only), per call. Run by the
 * bench in its own process against the same proxy and stand-in the service
 * calls, so the figure holds the same loopback and kernel costs a service call
 * pays, without any library or service code.
 *
 * Usage: node --import tsx scripts/bench/bare-calls.ts <url> <count> <headers as JSON>
 * Prints one JSON line: { cpuMsPerCall, status }.
 */
import { Agent, request } from 'node:http';

const [url = '', countText = '0', headersText = '{}'] = process.argv.slice(2);
const count = Number(countText);
const headers = JSON.parse(headersText) as Record<string, string>;
const agent = new Agent({ keepAlive: true });

function call(): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, headers }, (answer) => {
      answer.on('data', () => undefined);
      answer.on('end', () => resolve(answer.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const warmup = Math.min(100, count);
for (let i = 0; i < warmup; i += 1) await call();
const before = process.cpuUsage();
let status = 0;
for (let i = 0; i < count; i += 1) status = await call();
const used = process.cpuUsage(before);
console.log(JSON.stringify({ cpuMsPerCall: (used.user + used.system) / 1000 / count, status }));
agent.destroy();
