// `ctxkit serve` against clients that do not play fair, with raw sockets:
// slow senders, header floods, bodies that are never sent, other Host
// names, bad token files, initialize floods. Small limits from --config keep
// every case quick; no assertion depends on the machine's speed beyond
// deadlines many times what the behaviour needs.
//
// The ctxkit binary comes from the environment variable CTXKIT_BIN.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ctxkitBin, makeTmpDir, sleep, startServe } from './lib.mjs';

const TOKEN = 'hostile-test-token-0123456789abcdef0123';

function portOf(url) {
  return Number(new URL(url).port);
}

// A raw connection: everything the server sends, and whether it closed.
class Raw {
  constructor(port) {
    this.text = '';
    this.ended = false;
    this.errored = null;
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk) => (this.text += chunk));
    this.socket.on('error', (e) => (this.errored = e));
    this.closed = new Promise((resolve) => this.socket.on('close', resolve));
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('end', () => (this.ended = true));
  }
  write(data) {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve(false);
      this.socket.write(data, (error) => resolve(!error));
    });
  }
  // Resolves once the server closed the connection; rejects after `ms`.
  async closedWithin(ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: connection still open after ${ms} ms; got: ${this.text.slice(0, 300)}`)), ms);
    });
    try {
      await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  status() {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(this.text);
    return m ? Number(m[1]) : null;
  }
  body() {
    const at = this.text.indexOf('\r\n\r\n');
    return at < 0 ? '' : this.text.slice(at + 4);
  }
  destroy() {
    this.socket.destroy();
  }
}

// GET /health on a fresh connection: the status, or an error after `ms`.
async function health(port, ms = 10000) {
  const raw = new Raw(port);
  await raw.connected;
  await raw.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  await raw.closedWithin(ms, 'GET /health');
  return raw.status();
}

function tokenFile(contents = `${TOKEN}\n`, mode = 0o600) {
  const file = path.join(makeTmpDir(), 'token');
  fs.writeFileSync(file, contents, { mode });
  fs.chmodSync(file, mode);
  return file;
}

async function stopClean(server) {
  const { code } = await server.stop();
  assert.equal(code, 0, `exit code after SIGTERM; stderr: ${server.stderr()}`);
}

describe('slow clients', () => {
  let server;
  let port;
  before(async () => {
    // Two workers: on a server that gives each connection a worker, two
    // slow clients would be enough to starve /health.
    server = await startServe({
      config: { header_timeout_seconds: 1, body_timeout_seconds: 1, threads: 2 },
      extra: ['--token-file', tokenFile()],
    });
    port = portOf(server.url);
  });
  after(async () => stopClean(server));

  test('a client sending its headers a byte at a time gets 408 at the header deadline; /health answers meanwhile', async () => {
    const request = 'POST /api/chat/compact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}';
    const slow = [];
    let stop = false;
    for (let i = 0; i < 10; ++i) {
      const raw = new Raw(port);
      await raw.connected;
      slow.push(raw);
      (async () => {
        for (const byte of request) {
          if (stop || !(await raw.write(byte))) break;
          await sleep(200);
        }
      })();
    }
    await sleep(300);
    for (let i = 0; i < 3; ++i) assert.equal(await health(port), 200, '/health during the slow clients');
    for (const raw of slow) {
      await raw.closedWithin(15000, 'a slow client');
      assert.equal(raw.status(), 408);
      assert.match(raw.body(), /header_timeout_seconds/);
    }
    stop = true;
    assert.equal(await health(port), 200);
  });

  test('an authorized body sent a byte at a time gets 408 at the body deadline', async () => {
    const raw = new Raw(port);
    await raw.connected;
    await raw.write(`POST /api/chat/compact HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    let stop = false;
    (async () => {
      while (!stop && (await raw.write(' '))) await sleep(200);
    })();
    await raw.closedWithin(15000, 'a slow body');
    stop = true;
    assert.equal(raw.status(), 408);
    assert.match(raw.body(), /body_timeout_seconds/);
  });

  test('a rejected request is answered and closed without its body being read', async () => {
    // 401 (no token), and 404 with the token: the announced body never comes.
    for (const auth of ['', `Authorization: Bearer ${TOKEN}\r\n`]) {
      const raw = new Raw(port);
      await raw.connected;
      await raw.write(`POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 100000000\r\n\r\n`);
      await raw.closedWithin(10000, 'a rejected request whose body never comes');
      assert.equal(raw.status(), auth ? 404 : 401);
      assert.match(raw.text, /\r\nConnection: close\r\n/i);
      raw.destroy();
    }
  });
});

describe('header limits', () => {
  let server;
  let port;
  before(async () => {
    server = await startServe({ config: { max_headers: 20, max_header_bytes: 4096 } });
    port = portOf(server.url);
  });
  after(async () => stopClean(server));

  function headers(count, size = 10) {
    let text = '';
    for (let i = 0; i < count; ++i) text += `X-H${i}: ${'v'.repeat(size)}\r\n`;
    return text;
  }

  test('more header fields than max_headers: 431, closed', async () => {
    const raw = new Raw(port);
    await raw.connected;
    await raw.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers(20)}\r\n`);
    await raw.closedWithin(10000, 'too many headers');
    assert.equal(raw.status(), 431);
    assert.match(raw.body(), /max_headers \(20\)/);
  });

  test('headers larger than max_header_bytes: 431 and closed, without waiting for their end', async () => {
    const raw = new Raw(port);
    await raw.connected;
    await raw.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(5000)}`);
    await raw.closedWithin(10000, 'a header block over the limit');
    assert.equal(raw.status(), 431);
    assert.match(raw.body(), /max_header_bytes \(4096 bytes\)/);
  });

  test('within both limits: served, and the connection is kept', async () => {
    const raw = new Raw(port);
    await raw.connected;
    // 19 fields here plus Host: exactly max_headers.
    await raw.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers(19, 100)}\r\n`);
    const deadline = Date.now() + 10000;
    while (!raw.text.includes('"status":"ok"') && Date.now() < deadline) await sleep(10);
    assert.equal(raw.status(), 200);
    await raw.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await raw.closedWithin(10000, 'the second request');
    assert.equal(raw.text.match(/HTTP\/1\.1 200/g).length, 2);
  });

  // Each is one request that httplib would have framed differently from the
  // connection loop (a NUL ends its request line early; it skips a line
  // ending in a bare LF): one 400 naming the fault, then the connection
  // closes, and nothing after it is read as another request.
  const malformed = [
    ['a NUL byte in the target', 'GET /he\0alth HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', /target holds a control character/],
    ['a bare LF ending the request line', 'GET /health HTTP/1.1\nHost: 127.0.0.1\r\n\r\n', /LF without CR/],
    ['a bare LF ending a header line', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\n\r\n', /LF without CR/],
    ['a NUL byte in a header value', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\0b\r\n\r\n', /field value holds a control character/],
    ['a space before the colon', 'GET /health HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n', /field name is not a token/],
    ['obsolete line folding', 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n b\r\n\r\n', /obsolete line folding/],
    ['no HTTP version', 'GET /health\r\nHost: 127.0.0.1\r\n\r\n', /expected 'METHOD TARGET HTTP\/1\.1'/],
  ];
  for (const [what, request, message] of malformed) {
    test(`${what}: one 400 naming it, then closed`, async () => {
      const raw = new Raw(port);
      await raw.connected;
      await raw.write(`${request}GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await raw.closedWithin(10000, what);
      assert.equal(raw.status(), 400, raw.text);
      assert.equal(raw.text.match(/HTTP\/1\.1 /g).length, 1, raw.text);
      assert.match(JSON.parse(raw.body()).error, message);
    });
  }

  test('a malformed HEAD request: its 400 has no body (the fuzzer\'s desync)', async () => {
    const raw = new Raw(port);
    await raw.connected;
    await raw.write('HEAD /api\0\0\0/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    await raw.closedWithin(10000, 'a malformed HEAD request');
    assert.equal(raw.status(), 400);
    assert.equal(raw.body(), '');
    assert.match(raw.text, /\r\nConnection: close\r\n/);
  });
});

describe('connections, backlog and Host', () => {
  let server;
  let port;
  before(async () => {
    server = await startServe({ config: { max_connections_per_client: 3 } });
    port = portOf(server.url);
  });
  after(async () => stopClean(server));

  test('a connection beyond max_connections_per_client: 503, closed; the others still served', async () => {
    const open = [];
    for (let i = 0; i < 3; ++i) {
      const raw = new Raw(port);
      await raw.connected;
      open.push(raw);
    }
    const extra = new Raw(port);
    await extra.connected;
    await extra.closedWithin(10000, 'the connection over the limit');
    assert.equal(extra.status(), 503);
    assert.match(extra.body(), /max_connections_per_client is 3/);
    await open[0].write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await open[0].closedWithin(10000, 'a connection within the limit');
    assert.equal(open[0].status(), 200);
    for (const raw of open) raw.destroy();
  });

  test('listens with a backlog beyond 5 (the system maximum)', (t) => {
    const ss = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    if (ss.error) return t.skip('ss (iproute2) is not installed');
    const fields = ss.stdout.trim().split(/\s+/);
    const backlog = Number(fields[2]);
    const somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    assert.equal(backlog, somaxconn, `ss: ${ss.stdout}`);
  });

  test('a Host other than a loopback name or the listen host: 421 naming the header', async () => {
    const get = async (host) => {
      const raw = new Raw(port);
      await raw.connected;
      await raw.write(`GET /api/user/info HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      await raw.closedWithin(10000, `Host: ${host}`);
      return raw;
    };
    const bad = await get('attacker.example');
    assert.equal(bad.status(), 421);
    assert.match(JSON.parse(bad.body()).error, /Host header 'attacker\.example' is not allowed/);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST']) {
      assert.equal((await get(host)).status(), 200, host);
    }
  });
});

describe('authentication', () => {
  let server;
  before(async () => {
    server = await startServe({ extra: ['--token-file', tokenFile()] });
  });
  after(async () => stopClean(server));

  test('401 carries a Bearer challenge without OAuth metadata; OAuth discovery finds nothing', async () => {
    const none = await fetch(`${server.url}/mcp`, { method: 'POST', body: '{}' });
    assert.equal(none.status, 401);
    const challenge = none.headers.get('www-authenticate');
    assert.match(challenge, /^Bearer realm="ctxkit", error_description="[^"]+"$/);
    assert.doesNotMatch(challenge, /resource_metadata/);
    const wrong = await fetch(`${server.url}/mcp`, { method: 'POST', body: '{}', headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate'), /^Bearer realm="ctxkit", error="invalid_token"/);
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server']) {
      const discovery = await fetch(`${server.url}${p}`);
      assert.equal(discovery.status, 404, p);
      assert.match((await discovery.json()).error, /no OAuth authorization on this server/);
    }
  });
});

describe('the token file', () => {
  function serveExit(file) {
    const result = spawnSync(ctxkitBin(), ['serve', '--db', path.join(makeTmpDir(), 'db'), '--listen', '127.0.0.1:0', '--token-file', file], {
      encoding: 'utf8',
      timeout: 20000,
    });
    return result;
  }

  test('refused when group- or world-writable, a symbolic link, or shorter than 32 bytes', () => {
    const writable = tokenFile(`${TOKEN}\n`, 0o620);
    let r = serveExit(writable);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`'${writable}' is writable by its group or others \\(mode 0620\\)`));

    const target = tokenFile();
    const link = path.join(makeTmpDir(), 'link');
    fs.symlinkSync(target, link);
    r = serveExit(link);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`'${link}' is a symbolic link`));

    const short = tokenFile('short-token-of-31-bytes-0123456\n');
    r = serveExit(short);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /is 31 bytes long: a token must be at least 32 bytes/);
  });
});

describe('MCP sessions', () => {
  let server;
  before(async () => {
    server = await startServe({ config: { max_sessions: 4 } });
  });
  after(async () => stopClean(server));

  const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
  };
  const HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

  async function initialize() {
    const r = await fetch(`${server.url}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
    return { status: r.status, id: r.headers.get('mcp-session-id'), body: await r.text() };
  }

  test('a flood of initialize requests does not evict a session in use', async () => {
    const mine = await initialize();
    assert.equal(mine.status, 200);
    const headers = { ...HEADERS, 'mcp-session-id': mine.id, 'mcp-protocol-version': '2025-06-18' };
    const note = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(note.status, 202);
    for (let i = 0; i < 20; ++i) {
      const other = await initialize();
      assert.equal(other.status, 200, `initialize ${i}: ${other.body}`);
    }
    const list = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    assert.equal(list.status, 200, 'the session in use survived the flood');
    assert.ok((await list.json()).result.tools.length > 0);
  });
});
