// Shared helpers of the end-to-end MCP suites: starting `ctxkit mcp` (stdio)
// and `ctxkit serve` (Streamable HTTP), connecting the official SDK client,
// a raw line-level stdio client for what the SDK cannot express (malformed
// JSON, exact bytes on stdout, signals), and checks of tool results.
//
// The ctxkit binary comes from the environment variable CTXKIT_BIN (the
// CMake test sets it to the ctxkit_program target's file).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import Ajv from 'ajv';

export const TOOL_NAMES = [
  'manage_conversation',
  'compress_context',
  'count_tokens',
  'smart_cache',
  'track_references',
  'optimize_query',
  'compact_chat',
  // Seed 003, the context memory graph: d6c45ab's nine, then 0.1.1's one.
  'ping',
  'add_message',
  'retrieve_context',
  'get_similar_contexts',
  'add_relationship',
  'get_related_contexts',
  'summarize_context',
  'visualize_context',
  'get_context_metrics',
  'context_memory',
];

// Seed 003 tools whose answer is not an object (`pong`, JSON arrays of ids):
// they list no outputSchema and send no structuredContent.
export const UNSTRUCTURED_TOOLS = ['ping', 'get_related_contexts', 'get_similar_contexts'];

export const RESOURCE_URIS = [
  'conversation-history://all',
  'token-stats://aggregate',
  'cache-stats://current',
  'optimization-tips://general',
  'reference-library://all',
];

export const TEMPLATE_URIS = [
  'conversation-history://{conversation_id}',
  'token-stats://{conversation_id}',
  'optimization-tips://{conversation_id}',
  'reference-library://{conversation_id}',
];

export const PROMPT_NAMES = ['summarize_context', 'compress_conversation', 'extract_essentials'];

export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function ctxkitBin() {
  const bin = process.env.CTXKIT_BIN;
  if (!bin) throw new Error('CTXKIT_BIN must name the ctxkit binary');
  if (!fs.existsSync(bin)) throw new Error(`CTXKIT_BIN=${bin} does not exist`);
  return bin;
}

// A fresh directory for one server's store, removed at process exit.
const tmpDirs = [];
process.on('exit', () => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});
export function makeTmpDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-mcp-test-'));
  tmpDirs.push(dir);
  return dir;
}

// Sanitizer builds (-DCTXKIT_SANITIZE=address,undefined) report on the
// server's stderr, which the tests capture: a report fails the test.
const SANITIZER_RE = /ERROR: (Address|Leak|Thread)Sanitizer|runtime error: |SUMMARY: \w+Sanitizer/;
export function assertNoSanitizerReport(stderr, what) {
  const match = SANITIZER_RE.exec(stderr);
  assert.ok(!match, `${what}: sanitizer report on stderr:\n${stderr.slice(Math.max(0, (match?.index ?? 0) - 200), (match?.index ?? 0) + 4000)}`);
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Resolves when `predicate()` holds, polling; rejects after `ms`.
export async function waitUntil(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

function serverArgs(command, { db, config, extra = [] }) {
  const args = [command, '--db', db];
  if (config !== undefined) args.push('--config', JSON.stringify(config));
  return args.concat(extra);
}

function newClient() {
  return new Client(
    { name: 'ctxkit-e2e', version: '1.0.0' },
    { capabilities: {} },
  );
}

// A connected SDK client over stdio. `errors` collects what the client's
// onerror saw (e.g. a response to a request it had cancelled).
export async function connectStdio({ config, db = makeTmpDir() } = {}) {
  const transport = new StdioClientTransport({
    command: ctxkitBin(),
    args: serverArgs('mcp', { db, config }),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  const client = newClient();
  const errors = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  const pid = transport.pid;
  return {
    client,
    transport,
    errors,
    db,
    kind: 'stdio',
    stderr: () => stderr,
    close: async () => {
      await client.close();
      // client.close() ends stdin and waits for the process to exit.
      await waitUntil(() => !processAlive(pid), 10000, `ctxkit mcp (pid ${pid}) to exit`);
      await sleep(50);
      assertNoSanitizerReport(stderr, 'ctxkit mcp');
    },
  };
}

// `ctxkit serve --listen 127.0.0.1:0`: resolves once it printed its address.
export async function startServe({ config, db = makeTmpDir(), extra = [], env } = {}) {
  const child = spawn(
    ctxkitBin(),
    serverArgs('serve', { db, config, extra: ['--listen', '127.0.0.1:0', ...extra] }),
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk.toString();
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`ctxkit serve printed no address in 20 s; stderr: ${stderr}`)),
      20000,
    );
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const match = /ctxkit serve: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`ctxkit serve exited (${code ?? signal}) before listening; stderr: ${stderr}`));
    });
  });
  return {
    url,
    child,
    db,
    stderr: () => stderr,
    stdout: () => stdout,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      const result = await exited;
      clearTimeout(timer);
      assertNoSanitizerReport(stderr, 'ctxkit serve');
      return result;
    },
  };
}

export async function connectHttpClient(url) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  const client = newClient();
  const errors = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, transport, errors };
}

// A connected SDK client over Streamable HTTP, with its own server.
export async function connectHttp({ config, db } = {}) {
  const server = await startServe({ config, db });
  try {
    const { client, transport, errors } = await connectHttpClient(server.url);
    return {
      client,
      transport,
      errors,
      db: server.db,
      server,
      kind: 'http',
      stderr: server.stderr,
      close: async () => {
        try {
          await transport.terminateSession();
        } catch {
          // The session may already be gone; what matters is the server.
        }
        await client.close();
        const { code, signal } = await server.stop();
        assert.ok(code === 0 || signal === 'SIGTERM' || code === 143,
          `ctxkit serve exit after SIGTERM: code ${code} signal ${signal}`);
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

// The JSON document of a tool result: its one text block parsed, which must
// deep-equal structuredContent (the server sends the same JSON twice).
export function toolDoc(result) {
  assert.ok(Array.isArray(result.content), 'content is an array');
  assert.ok(result.content.length >= 1, 'content has a block');
  assert.equal(result.content[0].type, 'text');
  const doc = JSON.parse(result.content[0].text);
  assert.deepEqual(result.structuredContent, doc, 'structuredContent equals content[0].text');
  return doc;
}

// Validators of each tool's outputSchema with the SDK's own Ajv setup, so
// the check does not depend on the client having cached them.
export class OutputChecker {
  constructor(tools) {
    const provider = new AjvJsonSchemaValidator();
    this.validators = new Map();
    for (const tool of tools) {
      if (tool.outputSchema) this.validators.set(tool.name, provider.getValidator(tool.outputSchema));
    }
  }

  check(name, doc) {
    const validator = this.validators.get(name);
    assert.ok(validator, `outputSchema of ${name} known`);
    const result = validator(doc);
    assert.ok(result.valid, `${name} result matches its outputSchema: ${result.errorMessage}\n${JSON.stringify(doc).slice(0, 2000)}`);
  }
}

// Compiles a schema with a strict Ajv (unknown keywords, bad types rejected)
// so a typo in a schema is an error rather than silently ignored.
export function compileStrict(schema, what) {
  const ajv = new Ajv({ strict: true, strictTypes: false, strictTuples: false, allErrors: true });
  try {
    ajv.compile(schema);
  } catch (error) {
    assert.fail(`${what}: ${error.message}`);
  }
}

// Calls a tool; returns {result, doc} after checking the text/structured
// equality and the output schema. `expectError` selects isError.
export async function call(client, checker, name, args, { expectError = false, options } = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  const doc = toolDoc(result);
  checker?.check(name, doc);
  if (expectError) {
    assert.equal(result.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)} is a tool error: ${JSON.stringify(doc)}`);
    assert.equal(doc.success, false);
    assert.equal(typeof doc.error, 'string');
  } else {
    assert.ok(!result.isError, `${name} ${JSON.stringify(args).slice(0, 200)} succeeds: ${JSON.stringify(doc).slice(0, 1000)}`);
    // Seed 001's compaction response (compact_chat) has no "success".
    if (name === 'compact_chat') assert.notEqual(doc.success, false);
    else assert.equal(doc.success, true);
  }
  return doc;
}

// Expects `promise` to reject with an McpError of `code`.
export async function expectRpcError(promise, code, what) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.code, code, `${what}: error code of ${error.message}`);
    return true;
  }, what);
}

// Rounds like the seed's percentages (e.g. 0.007 for 14 of 200000).
export function round(value, digits) {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

// Many short chat messages: enough work for count_tokens to report
// progress and to be cancelled while running.
export function manyMessages(count) {
  const messages = new Array(count);
  for (let i = 0; i < count; i++) {
    messages[i] = {
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `Message ${i}: please check the cache hit rate of shard ${i % 97} again.`,
    };
  }
  return messages;
}

// A line-level stdio client: writes raw lines to `ctxkit mcp`, parses
// every stdout line (each must be one JSON-RPC 2.0 message) and keeps the
// raw stdout bytes for checks on partial lines.
export class RawStdio {
  constructor({ config, db = makeTmpDir(), extra = [] } = {}) {
    this.child = spawn(ctxkitBin(), serverArgs('mcp', { db, config, extra }), {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.db = db;
    this.messages = [];
    this.rawStdout = '';
    this.stderr = '';
    this.badLines = [];
    this.nextId = 1;
    this.pending = '';
    this.waiters = [];
    this.child.stdin.on('error', () => {});
    this.child.stdout.on('data', (chunk) => {
      const text = chunk.toString();
      this.rawStdout += text;
      this.pending += text;
      let newline;
      while ((newline = this.pending.indexOf('\n')) >= 0) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          this.badLines.push(line);
          continue;
        }
        if (!isJsonRpc(message)) this.badLines.push(line);
        this.messages.push(message);
      }
      this.wake();
    });
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        this.wake();
        resolve({ code, signal });
      });
    });
  }

  wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  writeLine(line) {
    this.child.stdin.write(`${line}\n`);
  }

  send(message) {
    this.writeLine(JSON.stringify(message));
  }

  // Sends a request; returns its id.
  sendRequest(method, params) {
    const id = this.nextId++;
    const message = { jsonrpc: '2.0', id, method };
    if (params !== undefined) message.params = params;
    this.send(message);
    return id;
  }

  // Waits for the first message satisfying `predicate` (already received
  // ones included).
  async waitFor(predicate, ms = 20000, what = 'a message') {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      if (this.exitInfo) {
        throw new Error(`ctxkit mcp exited (${JSON.stringify(this.exitInfo)}) while waiting for ${what}; stderr: ${this.stderr}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; stderr: ${this.stderr}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  response(id, ms, what) {
    return this.waitFor((m) => m.id === id && (m.result !== undefined || m.error !== undefined), ms,
      what ?? `the response to request ${id}`);
  }

  async request(method, params, ms) {
    const id = this.sendRequest(method, params);
    return this.response(id, ms, `the response to ${method} (id ${id})`);
  }

  async initialize(protocolVersion = '2025-11-25') {
    const reply = await this.request('initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'ctxkit-raw-e2e', version: '1.0.0' },
    });
    assert.ok(reply.result, `initialize succeeds: ${JSON.stringify(reply)}`);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return reply.result;
  }

  closeStdin() {
    this.child.stdin.end();
  }

  kill(signal = 'SIGTERM') {
    this.child.kill(signal);
  }

  // Stops the server if it still runs (end of input, then SIGKILL).
  async stop() {
    if (!this.exitInfo) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10000);
      await this.exited;
      clearTimeout(timer);
    }
    assertNoSanitizerReport(this.stderr, 'ctxkit mcp (raw)');
    return this.exitInfo;
  }

  // Every stdout line was one JSON-RPC message and output ends at a line end.
  assertCleanStdout() {
    assert.deepEqual(this.badLines, [], 'every stdout line is a JSON-RPC 2.0 message');
    assert.equal(this.pending, '', 'stdout ends with a complete line');
  }
}

function isJsonRpc(message) {
  if (Array.isArray(message)) return message.length > 0 && message.every(isJsonRpc);
  return message !== null && typeof message === 'object' && message.jsonrpc === '2.0';
}
