// `ctxkit serve` with real HTTP requests (node:test and the built-in fetch,
// no SDK): seed 001's REST endpoints, MCP at /mcp/v1 and the Streamable HTTP
// transport at /mcp, bearer tokens, the body limit, refusals at start,
// concurrency, graceful stop and the precedence of --print-config.
//
// The ctxkit binary comes from the environment variable CTXKIT_BIN.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

const BIN = process.env.CTXKIT_BIN;
if (!BIN || !fs.existsSync(BIN)) throw new Error('CTXKIT_BIN must name the ctxkit binary');

const tmpDirs = [];
process.on('exit', () => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});
function tmpDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxkit-http-test-'));
  tmpDirs.push(dir);
  return dir;
}

// Environment without any CTXKIT_* variable of the caller, so that only what
// a test sets applies.
function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CTXKIT_')) env[k] = v;
  return { ...env, ...extra };
}

// Runs ctxkit to completion: { code, stdout, stderr }.
function run(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ctxkit ${args.join(' ')} did not exit in 20 s`));
    }, 20000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// Starts `ctxkit serve` on an ephemeral port; resolves once it prints the
// address it listens on.
async function serve(extra = [], env = {}) {
  const child = spawn(BIN, ['serve', '--db', path.join(tmpDir(), 'db'), '--listen', '127.0.0.1:0', ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: cleanEnv(env),
  });
  let stderr = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address in 20 s: ${stderr}`)), 20000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /^ctxkit serve: listening on (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(stderr);
      if (m) {
        clearTimeout(timer);
        assert.notEqual(Number(m[2]), 0, 'the actual port is printed, not 0');
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ctxkit serve exited (${code}) before listening: ${stderr}`));
    });
  });
  return {
    url,
    child,
    exited,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

const HISTORY = [
  { role: 'user', content: 'Show me the users table' },
  { role: 'assistant', content: "Here's the schema of users: id, name, email, created_at." },
  { role: 'user', content: 'ok' },
  { role: 'assistant', content: 'Anything else?' },
  { role: 'user', content: 'Count the rows in orders grouped by status' },
];

async function post(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function json(response) {
  const type = response.headers.get('content-type') ?? '';
  assert.match(type, /^application\/json/, `JSON content type, got '${type}'`);
  return response.json();
}

// Parses a text/event-stream body into the JSON of its `data:` events.
function sseMessages(text) {
  const messages = [];
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data) messages.push(JSON.parse(data));
  }
  return messages;
}

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'http-test', version: '1' } },
};
const JSON_AND_SSE = { accept: 'application/json, text/event-stream' };
const JSON_ONLY = { accept: 'application/json' };

describe('ctxkit serve without a token', () => {
  let server;
  before(async () => {
    server = await serve();
  });
  after(async () => {
    const { code } = await server.stop();
    assert.equal(code, 0, `exit code after SIGTERM; stderr: ${server.stderr()}`);
  });

  test('GET /health', async () => {
    const r = await fetch(`${server.url}/health`);
    assert.equal(r.status, 200);
    const body = await json(r);
    assert.equal(body.status, 'ok');
    assert.equal(body.server, 'ctxkit');
    assert.match(body.version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(Object.keys(body).sort(), ['server', 'status', 'version']);
  });

  test('GET /api/user/info is "local" without a token file', async () => {
    const r = await fetch(`${server.url}/api/user/info`);
    assert.equal(r.status, 200);
    assert.deepEqual(await json(r), { username: 'local', auth: 'none' });
  });

  test('POST /api/chat/compact answers seed 001', async () => {
    const r = await post(`${server.url}/api/chat/compact`, {
      messages: HISTORY,
      max_tokens: 100000,
      recent_window: 10,
      keep_anchors: true,
      options: { preserve_tool_results: true, token_counter_type: 'anthropic' },
    });
    assert.equal(r.status, 200);
    const body = await json(r);
    assert.ok(Array.isArray(body.messages) && body.messages.length > 0);
    for (const m of body.messages) assert.equal(typeof m.content, 'string');
    for (const key of ['topics', 'tables', 'tools']) assert.ok(Array.isArray(body.summary[key]), key);
    assert.equal(typeof body.summary.description, 'string');
    assert.ok(Number.isInteger(body.token_estimate) && body.token_estimate > 0);
    const info = body.compaction_info;
    assert.equal(info.original_count, HISTORY.length);
    assert.equal(info.compacted_count, body.messages.length);
    for (const key of ['dropped_count', 'anchor_count', 'tokens_saved', 'compression_ratio']) {
      assert.equal(typeof info[key], 'number', key);
    }
  });

  test("seed 003's REST routes (0.1.1) over the context graph", async () => {
    const memory = (body) => post(`${server.url}/tools/context_memory`, body);
    let r = await memory({ action: 'add', contextId: 'rest/a', role: 'user', content: 'Rotate the signing keys weekly', importance: 'high' });
    assert.equal(r.status, 200);
    let body = await json(r);
    assert.equal(body.success, true);
    assert.equal(body.message, "Message added to context 'rest/a'");
    assert.equal(body.importanceLevel, 'high');
    r = await memory({ action: 'add', contextId: 'rest:b', role: 'assistant', content: 'Keys live in the vault' });
    assert.equal(r.status, 200);
    r = await memory({ action: 'add_relationship', contextId: 'rest/a', targetId: 'rest:b', relationshipType: 'references', strength: 3 });
    assert.equal(r.status, 200, 'strength is clamped on this path');
    body = await json(r);
    assert.equal(body.message, "Added references relationship from 'rest/a' to 'rest:b'");
    assert.equal(body.clamped, true);
    assert.equal(body.weight, 1);
    r = await memory({ action: 'add', contextId: 'rest/a' });
    assert.equal(r.status, 400);
    r = await memory({ action: 'nope', contextId: 'x' });
    assert.equal(r.status, 400);
    assert.match((await json(r)).message, /^Unknown action: nope\. Supported actions are 'add'/);
    r = await memory({ action: 'get_meta' });
    assert.equal(r.status, 400, '0.1.1 wants contextId even for get_meta');

    r = await fetch(`${server.url}/`);
    assert.equal(r.status, 200);
    const root = await json(r);
    assert.equal(root.name, 'prompt-context');
    assert.deepEqual(root.tools.map((t) => t.name), ['context_memory']);

    r = await fetch(`${server.url}/contexts`);
    const contexts = await json(r);
    assert.deepEqual([...contexts.contextIds].sort(), ['rest/a', 'rest:b']);
    // An id holding '/' is sent percent-encoded; /related/rest/a is no route.
    r = await fetch(`${server.url}/related/rest%2Fa`);
    assert.equal(r.status, 200);
    assert.deepEqual((await json(r)).relatedContexts, ['rest:b']);
    r = await fetch(`${server.url}/related/rest%2Fa?direction=incoming`);
    assert.deepEqual((await json(r)).relatedContexts, []);
    r = await fetch(`${server.url}/related/rest/a`);
    assert.equal(r.status, 404);
    r = await fetch(`${server.url}/similar?text=signing%20keys&limit=1`);
    assert.equal(r.status, 200);
    const similar = await json(r);
    assert.equal(similar.similarContexts.length, 1);
    assert.equal(similar.similarContexts[0].contextId, 'rest/a');
    r = await fetch(`${server.url}/similar`);
    assert.equal(r.status, 400);
    assert.equal((await json(r)).message, 'Missing required parameter: text');
    for (const p of ['/hierarchies', '/meta-summaries']) {
      r = await fetch(`${server.url}${p}`);
      assert.equal(r.status, 200, p);
      assert.equal((await json(r)).success, true);
    }
    r = await post(`${server.url}/contexts`, {});
    assert.equal(r.status, 405);
  });

  test('POST /api/chat/compact compacts to a small budget', async () => {
    const messages = [];
    for (let i = 0; i < 60; i++) {
      messages.push({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}` });
    }
    const r = await post(`${server.url}/api/chat/compact`, { messages, max_tokens: 800, recent_window: 4 });
    assert.equal(r.status, 200);
    const body = await json(r);
    assert.equal(body.compaction_info.original_count, 60);
    assert.ok(body.compaction_info.compacted_count < 60);
    assert.ok(body.compaction_info.tokens_saved > 0);
  });

  test('POST /api/chat/compact: 400 with a message for bad bodies', async () => {
    const cases = [
      ['{not json', /JSON/i],
      ['', /empty/i],
      ['[1,2]', /./],
      [JSON.stringify({ messages: [] }), /messages/],
      [JSON.stringify({ max_tokens: 10 }), /messages/],
      [JSON.stringify({ messages: [{ role: 'wizard', content: 'x' }] }), /role/],
    ];
    for (const [body, pattern] of cases) {
      const r = await post(`${server.url}/api/chat/compact`, body);
      assert.equal(r.status, 400, `status for ${body}`);
      const answer = await json(r);
      assert.equal(typeof answer.error, 'string');
      assert.match(answer.error, pattern, `message for ${body}`);
    }
  });

  test('405 with Allow for other methods', async () => {
    const cases = [
      ['GET', '/api/chat/compact', 'POST'],
      ['PUT', '/api/chat/compact', 'POST'],
      ['DELETE', '/api/chat/compact', 'POST'],
      ['POST', '/health', 'GET, HEAD'],
      ['POST', '/api/user/info', 'GET, HEAD'],
      ['GET', '/mcp/v1', 'POST'],
      ['GET', '/mcp', 'POST, DELETE'],
      ['PATCH', '/mcp', 'POST, DELETE'],
    ];
    for (const [method, p, allow] of cases) {
      const init = { method };
      if (method !== 'GET') init.body = '{}';
      const r = await fetch(`${server.url}${p}`, init);
      assert.equal(r.status, 405, `${method} ${p}`);
      assert.equal(r.headers.get('allow'), allow, `${method} ${p}`);
      assert.match((await json(r)).error, /not allowed/);
    }
  });

  test('404 for an unknown path', async () => {
    const r = await fetch(`${server.url}/api/nothing`);
    assert.equal(r.status, 404);
    assert.match((await json(r)).error, /nothing/);
  });

  test('403 for a foreign Origin; localhost origins pass', async () => {
    const bad = await fetch(`${server.url}/api/user/info`, { headers: { origin: 'http://evil.example' } });
    assert.equal(bad.status, 403);
    assert.match((await json(bad)).error, /origin/);
    const ok = await fetch(`${server.url}/api/user/info`, { headers: { origin: 'http://localhost:5173' } });
    assert.equal(ok.status, 200);
    const health = await fetch(`${server.url}/health`, { headers: { origin: 'http://evil.example' } });
    assert.equal(health.status, 200);
  });

  test('POST /mcp/v1: one JSON-RPC message per request', async () => {
    let r = await post(`${server.url}/mcp/v1`, INIT);
    assert.equal(r.status, 200);
    let body = await json(r);
    assert.equal(body.id, 1);
    assert.equal(body.result.serverInfo.name, 'ctxkit');

    r = await post(`${server.url}/mcp/v1`, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    body = await json(r);
    assert.equal(body.id, 2);
    assert.ok(body.result.tools.some((t) => t.name === 'compact_chat'));

    r = await post(`${server.url}/mcp/v1`, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'count_tokens', arguments: { input: 'hello world' } },
    });
    body = await json(r);
    assert.equal(body.id, 3);
    assert.equal(body.result.isError ?? false, false);

    r = await post(`${server.url}/mcp/v1`, { jsonrpc: '2.0', id: 4, method: 'no/such' });
    assert.equal(r.status, 200);
    assert.equal((await json(r)).error.code, -32601);

    r = await post(`${server.url}/mcp/v1`, '{"jsonrpc":');
    assert.equal(r.status, 400);
    assert.equal((await json(r)).error.code, -32700);

    r = await post(`${server.url}/mcp/v1`, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(r.status, 202);
    assert.equal(await r.text(), '');
  });

  test('Streamable HTTP at /mcp: session lifecycle', async () => {
    // Without a session id only initialize is accepted.
    let r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, JSON_ONLY);
    assert.equal(r.status, 400);
    assert.match((await json(r)).error.message, /Mcp-Session-Id/);

    r = await post(`${server.url}/mcp`, INIT, JSON_ONLY);
    assert.equal(r.status, 200);
    const id = r.headers.get('mcp-session-id');
    assert.match(id ?? '', /^[0-9a-f]{32}$/);
    const init = await json(r);
    assert.equal(init.result.protocolVersion, '2025-06-18');

    const headers = { ...JSON_ONLY, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    assert.equal(r.status, 202);
    assert.equal(await r.text(), '');

    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'ping' }, headers);
    assert.equal(r.status, 200);
    assert.deepEqual(await json(r), { jsonrpc: '2.0', id: 2, result: {} });

    // A response from the client (the server sends no requests): accepted.
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 'x', result: {} }, headers);
    assert.equal(r.status, 202);

    // Unsupported protocol revision: 400.
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 3, method: 'ping' }, {
      ...headers,
      'mcp-protocol-version': '1999-01-01',
    });
    assert.equal(r.status, 400);
    assert.match((await json(r)).error.message, /MCP-Protocol-Version/);

    // Unknown session: 404.
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 4, method: 'ping' }, {
      ...headers,
      'mcp-session-id': '0'.repeat(32),
    });
    assert.equal(r.status, 404);

    // Malformed JSON in a session: 400 with the parse error.
    r = await post(`${server.url}/mcp`, '{oops', headers);
    assert.equal(r.status, 400);
    assert.equal((await json(r)).error.code, -32700);

    // GET: no server-initiated stream.
    r = await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': id } });
    assert.equal(r.status, 405);

    // DELETE ends the session; then it is unknown.
    r = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': id } });
    assert.equal(r.status, 204);
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 5, method: 'ping' }, headers);
    assert.equal(r.status, 404);
    r = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': id } });
    assert.equal(r.status, 404);
    r = await fetch(`${server.url}/mcp`, { method: 'DELETE' });
    assert.equal(r.status, 400);
  });

  test('Streamable HTTP: a failed initialize creates no session', async () => {
    const r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: 7 }, JSON_ONLY);
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('mcp-session-id'), null);
    assert.equal((await json(r)).error.code, -32602);
  });

  test('Streamable HTTP: text/event-stream when the client accepts it', async () => {
    let r = await post(`${server.url}/mcp`, INIT, JSON_AND_SSE);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    const id = r.headers.get('mcp-session-id');
    assert.ok(id);
    const [init] = sseMessages(await r.text());
    assert.equal(init.id, 1);
    assert.ok(init.result.capabilities.tools);

    const headers = { ...JSON_AND_SSE, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    r = await post(`${server.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }, headers);
    assert.deepEqual(sseMessages(await r.text()).at(-1), { jsonrpc: '2.0', id: 2, result: {} });

    const messages = [];
    for (let i = 0; i < 2500; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `line ${i} of the talk` });
    r = await post(
      `${server.url}/mcp`,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'count_tokens', arguments: { input: messages }, _meta: { progressToken: 'p1' } },
      },
      headers,
    );
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    const events = sseMessages(await r.text());
    const last = events.at(-1);
    assert.equal(last.id, 3, 'the response ends the stream');
    assert.equal(last.result.isError ?? false, false);
    assert.ok(last.result.structuredContent);
    // Progress went out on the stream before the response.
    assert.ok(
      events.some((e) => e.method === 'notifications/progress' && e.params.progressToken === 'p1'),
      'a progress notification precedes the response',
    );
    // Anything before it is a notification (progress, log messages).
    for (const e of events.slice(0, -1)) {
      assert.ok(['notifications/progress', 'notifications/message'].includes(e.method), JSON.stringify(e));
    }
    await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': id } });
  });

  test('50 parallel compactions are all answered correctly', async () => {
    const requests = [];
    for (let i = 0; i < 50; i++) {
      const messages = [];
      for (let j = 0; j <= i % 7; j++) messages.push({ role: j % 2 ? 'assistant' : 'user', content: `request ${i} message ${j}` });
      requests.push(
        post(`${server.url}/api/chat/compact`, { messages }).then(async (r) => {
          assert.equal(r.status, 200);
          const body = await json(r);
          assert.equal(body.compaction_info.original_count, messages.length);
          assert.equal(body.messages[0].content, `request ${i} message 0`);
        }),
      );
    }
    const started = Date.now();
    await Promise.all(requests);
    assert.ok(Date.now() - started < 20000, 'served in parallel, not behind idle connections');
  });
});

describe('ctxkit serve with --token-file', () => {
  let server;
  const token = 'test-token-0123456789abcdef0123456789';
  before(async () => {
    const file = path.join(tmpDir(), 'token');
    fs.writeFileSync(file, `${token}\nsecond line ignored\n`);
    server = await serve(['--token-file', file]);
  });
  after(async () => {
    await server.stop();
  });

  const auth = { authorization: `Bearer ${token}` };

  test('/health needs no token', async () => {
    const r = await fetch(`${server.url}/health`);
    assert.equal(r.status, 200);
  });

  test('401 without a token or with a wrong one, on every other endpoint', async () => {
    const endpoints = [
      ['GET', '/api/user/info'],
      ['POST', '/api/chat/compact'],
      ['POST', '/mcp/v1'],
      ['POST', '/mcp'],
      ['DELETE', '/mcp'],
      ['GET', '/nothing'],
      ['GET', '/contexts'],
      ['GET', '/related/a'],
      ['POST', '/tools/context_memory'],
    ];
    for (const [method, p] of endpoints) {
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${token}` }, { authorization: `Bearer ${token}x` }]) {
        const init = { method, headers };
        if (method === 'POST') init.body = JSON.stringify({ messages: HISTORY });
        const r = await fetch(`${server.url}${p}`, init);
        assert.equal(r.status, 401, `${method} ${p} ${JSON.stringify(headers)}`);
        assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer realm="ctxkit"/);
        assert.equal(typeof (await json(r)).error, 'string');
      }
    }
  });

  test('200 with the token', async () => {
    let r = await fetch(`${server.url}/api/user/info`, { headers: auth });
    assert.equal(r.status, 200);
    assert.deepEqual(await json(r), { username: 'bearer', auth: 'bearer' });

    r = await fetch(`${server.url}/api/user/info`, { headers: { authorization: `bearer   ${token}` } });
    assert.equal(r.status, 200, 'the scheme is case-insensitive');

    r = await post(`${server.url}/api/chat/compact`, { messages: HISTORY }, auth);
    assert.equal(r.status, 200);
    assert.equal((await json(r)).compaction_info.original_count, HISTORY.length);

    r = await post(`${server.url}/mcp/v1`, { jsonrpc: '2.0', id: 1, method: 'ping' }, auth);
    assert.equal(r.status, 200);

    r = await post(`${server.url}/mcp`, INIT, { ...auth, ...JSON_ONLY });
    assert.equal(r.status, 200);
    const id = r.headers.get('mcp-session-id');
    r = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': id } });
    assert.equal(r.status, 204);
  });
});

describe('body limit from --config', () => {
  let server;
  before(async () => {
    server = await serve(['--config', JSON.stringify({ max_body_bytes: 2048, timeout_seconds: 5, threads: 2 })]);
  });
  after(async () => {
    await server.stop();
  });

  test('413 beyond max_body_bytes, 200 within it, the server still serving', async () => {
    const small = { messages: HISTORY };
    assert.ok(JSON.stringify(small).length < 2048);
    let r = await post(`${server.url}/api/chat/compact`, small);
    assert.equal(r.status, 200);

    const big = { messages: [{ role: 'user', content: 'x'.repeat(4096) }] };
    r = await post(`${server.url}/api/chat/compact`, big);
    assert.equal(r.status, 413);
    assert.match((await json(r)).error, /max_body_bytes/);

    r = await post(`${server.url}/mcp/v1`, { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'y'.repeat(3000) } });
    assert.equal(r.status, 413);

    // A chunked body (no Content-Length) is held to the same limit.
    const chunks = [JSON.stringify(big)];
    const stream = new ReadableStream({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    r = await fetch(`${server.url}/api/chat/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    assert.equal(r.status, 413);

    r = await post(`${server.url}/api/chat/compact`, small);
    assert.equal(r.status, 200);
  });
});

describe('start-up refusals and configuration', () => {
  test('a non-loopback address without a token file is refused', async () => {
    const { code, stderr } = await run(['serve', '--db', path.join(tmpDir(), 'db'), '--listen', '0.0.0.0:0']);
    assert.equal(code, 1);
    assert.match(stderr, /refusing to listen on 0\.0\.0\.0:0 without --token-file/);
    const env = await run(['serve', '--db', path.join(tmpDir(), 'db')], { CTXKIT_LISTEN: '[::]:0' });
    assert.equal(env.code, 1);
    assert.match(env.stderr, /refusing to listen/);
  });

  test('a missing or empty token file is an error at start', async () => {
    const dir = tmpDir();
    const missing = await run(['serve', '--db', path.join(dir, 'db'), '--listen', '127.0.0.1:0', '--token-file', path.join(dir, 'none')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /token file/);
    fs.writeFileSync(path.join(dir, 'empty'), '\n');
    const empty = await run(['serve', '--db', path.join(dir, 'db'), '--listen', '127.0.0.1:0', '--token-file', path.join(dir, 'empty')]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /is empty/);
  });

  test('--print-config: flags over environment over --config over defaults', async () => {
    const config = JSON.stringify({ listen: '127.0.0.1:1111', page_size: 7, log_level: 'info', max_body_bytes: 5000 });
    const env = { CTXKIT_PORT: '2222', CTXKIT_PAGE_SIZE: '8' };

    // The default store location is resolved (and not created).
    const home = path.join(tmpDir(), 'home');
    let r = await run(['serve', '--print-config'], { HOME: home, XDG_DATA_HOME: '' });
    assert.equal(r.code, 0, r.stderr);
    const defaults = JSON.parse(r.stdout);
    assert.equal(fs.existsSync(home), false, '--print-config created the store');
    assert.deepEqual(defaults, {
      db: `${home}/.local/share/ctxkit`,
      listen: '127.0.0.1:6789',
      token_file: '',
      max_body_bytes: 8388608,
      max_message_bytes: 67108864,
      timeout_seconds: 30,
      threads: 0,
      header_timeout_seconds: 10,
      body_timeout_seconds: 60,
      max_header_bytes: 65536,
      max_headers: 100,
      max_connections_per_client: 256,
      max_sessions: 1024,
      page_size: 50,
      default_model: 'claude-3-5-sonnet',
      log_level: 'warning',
      // Seed 003's options and ctxkit's own for the graph (CG-13).
      graph: {
        messageLimitThreshold: 10,
        tokenLimitPercentage: 80,
        ignorePatterns: [],
        autoSummarize: true,
        hierarchicalContext: true,
        metaSummaryThreshold: 5,
        maxHierarchyDepth: 3,
        similarityThreshold: 0.6,
        autoCleanupContexts: true,
        trackApiCalls: true,
        apiAnalyticsRetention: 30,
        fallbackToKeywordMatch: true,
        model: '',
        contextWindowTokens: 0,
        maxSummaryTokens: 512,
        summaryWindow: 200,
        summaryHistory: 10,
        autoLinkLimit: 5,
        cleanupEvery: 10,
        cleanupMode: 'archive',
        embeddingDims: 0,
      },
    });

    r = await run(['serve', '--print-config', '--config', config], {});
    let c = JSON.parse(r.stdout);
    assert.equal(c.listen, '127.0.0.1:1111');
    assert.equal(c.page_size, 7);

    r = await run(['serve', '--print-config', '--config', config], env);
    c = JSON.parse(r.stdout);
    assert.equal(c.listen, '127.0.0.1:2222', 'CTXKIT_PORT over the --config address');
    assert.equal(c.page_size, 8, 'environment over --config');
    assert.equal(c.log_level, 'info', '--config over the default');
    assert.equal(c.max_body_bytes, 5000);

    r = await run(['serve', '--print-config', '--config', config, '--listen', '127.0.0.1:3333', '--db', '/tmp/x'], {
      ...env,
      CTXKIT_DB: '/tmp/y',
    });
    c = JSON.parse(r.stdout);
    assert.equal(c.listen, '127.0.0.1:3333', 'flag over environment');
    assert.equal(c.db, '/tmp/x');

    // @FILE, and the output is itself a valid --config.
    const file = path.join(tmpDir(), 'config.json');
    fs.writeFileSync(file, r.stdout);
    const again = await run(['serve', '--print-config', '--config', `@${file}`], {});
    assert.deepEqual(JSON.parse(again.stdout), c);

    // `ctxkit mcp` reads the same configuration.
    r = await run(['mcp', '--print-config', '--config', config], env);
    assert.equal(JSON.parse(r.stdout).page_size, 8);
  });

  test('configuration errors name the source and the setting', async () => {
    const cases = [
      [['--config', '{"page_sise":3}'], {}, /--config: unknown key 'page_sise'/],
      [['--config', '{"page_size":0}'], {}, /--config: page_size must be an integer in 1\.\.1000/],
      [['--config', '{"threads":"4"}'], {}, /threads must be/],
      [['--config', '[]'], {}, /must be a JSON object/],
      [['--config', '@/nonexistent/ctxkit.json'], {}, /cannot open/],
      [[], { CTXKIT_PORT: 'http' }, /CTXKIT_PORT: not a port number/],
      [[], { CTXKIT_LOG_LEVEL: 'loud' }, /CTXKIT_LOG_LEVEL: log_level must be one of/],
      [['--listen', 'localhost'], {}, /--listen: bad listen address/],
      [['--listen', '::1:80'], {}, /needs brackets/],
    ];
    for (const [args, env, pattern] of cases) {
      const r = await run(['serve', '--print-config', ...args], env);
      assert.equal(r.code, 1, `${args.join(' ')} ${JSON.stringify(env)}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
    }
  });
});

describe('graceful stop', () => {
  test('SIGTERM lets the request in flight finish, then exits 0', async () => {
    const server = await serve();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const text = JSON.stringify({ messages: HISTORY });
    const half = text.length >> 1;
    let sent = 0;
    const stream = new ReadableStream({
      async pull(controller) {
        if (sent === 0) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, half)));
          sent = 1;
        } else if (sent === 1) {
          await gate;
          controller.enqueue(new TextEncoder().encode(text.slice(half)));
          sent = 2;
        } else {
          controller.close();
        }
      },
    });
    const pending = fetch(`${server.url}/api/chat/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(server.child.exitCode, null, 'still running while the request is in flight');
    release();
    const r = await pending;
    assert.equal(r.status, 200);
    assert.equal((await json(r)).compaction_info.original_count, HISTORY.length);
    // No second signal: that one would end the process at once.
    const { code } = await server.exited;
    assert.equal(code, 0);
    assert.match(server.stderr(), /stopping/);
    // The listening socket is closed.
    await assert.rejects(fetch(`${server.url}/health`));
  });
});
