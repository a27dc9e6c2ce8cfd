// Seed 003 (prompt-context, d6c45ab) and ctxkit side by side on the same MCP
// calls over stdio, in the same run: the same requests, one in flight, each
// timed from writing its line to reading its reply.
//
//   node bench/graph_compare_seed.mjs --seed PATH/TO/mcp-server.bundle.js \
//        [--ctxkit build/release/ctxkit] [--contexts 100] [--messages 1000] \
//        [--queries 300]
//
// The seed is not part of ctxkit and nothing here builds it: PATH is a copy
// its user built from its own repository (npm install && npx webpack). Each
// server gets a fresh data directory (the seed's MCP_SERVER_BASE_DIR and
// HOME; ctxkit's --db) that is removed at exit.
//
// The calls, in order: --messages add_message spread over --contexts
// contexts; one add_relationship per context (c_i references c_(i+1));
// --queries get_related_contexts (type and direction given), --queries
// get_similar_contexts, and summarize_context of 20 contexts (or all). For each kind:
// p50 and p99 in microseconds per server and ctxkit's speed-up (seed p50 /
// ctxkit p50). Every reply is checked to be a success; a failure stops the
// run with exit status 1, naming the server and the call. The load average
// is printed before and after.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const options = {
  seed: null,
  ctxkit: path.join(here, '..', 'build', 'release', 'ctxkit'),
  contexts: 100,
  messages: 1000,
  queries: 300,
};
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  const value = process.argv[i + 1];
  if (!(key in options) || value === undefined) {
    console.error(`usage: node ${path.basename(process.argv[1])} --seed BUNDLE [--ctxkit PATH] [--contexts N] [--messages N] [--queries N]`);
    process.exit(2);
  }
  options[key] = ['contexts', 'messages', 'queries'].includes(key) ? Number(value) : value;
}
if (!options.seed || !fs.existsSync(options.seed)) {
  console.error('--seed must name the seed\'s built mcp-server.bundle.js');
  process.exit(2);
}
if (!fs.existsSync(options.ctxkit)) {
  console.error(`no ctxkit program at ${options.ctxkit} (--ctxkit PATH)`);
  process.exit(2);
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-seed-compare-'));
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));

// A JSON-RPC client over a child's stdio, newline-delimited.
class Server {
  constructor(name, command, args, env) {
    this.name = name;
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', process.env.GRAPH_COMPARE_DEBUG ? 'inherit' : 'ignore'], env: { ...process.env, ...env } });
    this.buffer = '';
    this.waiting = new Map();
    this.nextId = 1;
    this.child.on('exit', (code, signal) => {
      if (this.stopping) return;
      console.error(`${name} exited (${signal ?? code}) with ${this.waiting.size} request(s) unanswered`);
      process.exit(1);
    });
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      let newline;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        if (!line.trim()) continue;
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue; // a log line on stdout
        }
        const resolve = this.waiting.get(message.id);
        if (resolve) {
          this.waiting.delete(message.id);
          resolve(message);
        }
      }
    });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  async start() {
    const init = await this.request('initialize', {
      protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'graph_compare_seed', version: '1' },
    });
    if (!init.result) throw new Error(`${this.name}: initialize failed: ${JSON.stringify(init)}`);
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }

  // Calls `tool`; returns the microseconds it took.
  async call(tool, args) {
    const start = process.hrtime.bigint();
    const reply = await this.request('tools/call', { name: tool, arguments: args });
    const micros = Number(process.hrtime.bigint() - start) / 1000;
    if (!reply.result || reply.result.isError) {
      console.error(`${this.name}: ${tool} ${JSON.stringify(args)} failed: ${JSON.stringify(reply).slice(0, 500)}`);
      process.exit(1);
    }
    return micros;
  }

  stop() {
    this.stopping = true;
    this.child.stdin.end();
    this.child.kill('SIGTERM');
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round(p * (sorted.length - 1)))];
}

const WORDS = ['login', 'token', 'refresh', 'cache', 'redis', 'session', 'deploy', 'retry', 'timeout', 'error',
  'schema', 'index', 'query', 'migration', 'tests', 'build', 'auth', 'store', 'graph', 'path'];
function sentence(i) {
  const words = [];
  for (let w = 0; w < 12; w++) words.push(WORDS[(i * 7 + w * 13 + (i >> 3)) % WORDS.length]);
  return `message ${i}: ${words.join(' ')}`;
}

// The same calls for both servers, in the same order.
async function run(server) {
  const times = {};
  const record = (kind, micros) => (times[kind] ??= []).push(micros);
  for (let i = 0; i < options.messages; i++) {
    record('add_message', await server.call('add_message', {
      contextId: `c${i % options.contexts}`, message: sentence(i), role: i % 2 ? 'assistant' : 'user', importance: 'MEDIUM',
    }));
  }
  for (let c = 0; c < options.contexts; c++) {
    record('add_relationship', await server.call('add_relationship', {
      sourceContextId: `c${c}`, targetContextId: `c${(c + 1) % options.contexts}`, relationshipType: 'references', weight: 0.8,
    }));
  }
  for (let q = 0; q < options.queries; q++) {
    record('get_related_contexts', await server.call('get_related_contexts', {
      contextId: `c${q % options.contexts}`, relationshipType: 'references', direction: 'outgoing',
    }));
  }
  for (let q = 0; q < options.queries; q++) {
    record('get_similar_contexts', await server.call('get_similar_contexts', {
      query: `${WORDS[q % WORDS.length]} ${WORDS[(q * 3 + 1) % WORDS.length]}`, limit: 5,
    }));
  }
  for (let c = 0; c < Math.min(20, options.contexts); c++) {
    record('summarize_context', await server.call('summarize_context', { contextId: `c${c}` }));
  }
  return times;
}

function loadAverage() {
  return os.loadavg().map((x) => x.toFixed(2)).join(' ');
}

console.log(`load average at start: ${loadAverage()}`);
console.log(`${options.messages} messages over ${options.contexts} contexts, ${options.queries} queries of each kind`);
const seedDir = path.join(scratch, 'seed');
fs.mkdirSync(seedDir);
const seed = new Server('seed', process.execPath, [options.seed], { MCP_SERVER_BASE_DIR: seedDir, HOME: seedDir });
const ctxkit = new Server('ctxkit', options.ctxkit, ['mcp', '--db', path.join(scratch, 'ctxkit-db')], {});
await seed.start();
await ctxkit.start();
const seedTimes = await run(seed);
const ctxkitTimes = await run(ctxkit);
seed.stop();
ctxkit.stop();

console.log(`${'call'.padEnd(22)} ${'seed p50'.padStart(10)} ${'seed p99'.padStart(10)} ${'ctxkit p50'.padStart(11)} ${'ctxkit p99'.padStart(11)} ${'speed-up'.padStart(9)}`);
for (const kind of Object.keys(seedTimes)) {
  const s = [...seedTimes[kind]].sort((a, b) => a - b);
  const c = [...ctxkitTimes[kind]].sort((a, b) => a - b);
  const row = [percentile(s, 0.5), percentile(s, 0.99), percentile(c, 0.5), percentile(c, 0.99)];
  console.log(`${kind.padEnd(22)} ${row[0].toFixed(0).padStart(10)} ${row[1].toFixed(0).padStart(10)} ${row[2].toFixed(0).padStart(11)} ${row[3].toFixed(0).padStart(11)} ${(row[0] / row[2]).toFixed(1).padStart(8)}x`);
}
console.log('(microseconds per call, one in flight, over MCP stdio)');
console.log(`load average at end: ${loadAverage()}`);
