// `ctxkit mcp` over stdio: the common suite through the SDK's
// StdioClientTransport, then what only a raw line-level client can check:
// protocol negotiation, malformed JSON, cancellation on the wire, EOF,
// SIGTERM and the cleanliness of stdout.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PROTOCOL_VERSIONS, RawStdio, TOOL_NAMES, connectStdio, manyMessages, sleep } from './lib.mjs';
import { defineCommonSuite } from './scenarios.mjs';

defineCommonSuite(connectStdio);

describe('stdio wire', () => {
  it('initialize answers each served revision with itself, others with 2025-11-25', async () => {
    for (const version of [...PROTOCOL_VERSIONS, '2023-01-01', 'not-a-date']) {
      const raw = new RawStdio();
      try {
        const result = await raw.initialize(version);
        const expected = PROTOCOL_VERSIONS.includes(version) ? version : '2025-11-25';
        assert.equal(result.protocolVersion, expected, `client asked ${version}`);
        assert.ok(result.capabilities.tools, JSON.stringify(result.capabilities));
        assert.equal(typeof result.serverInfo.name, 'string');
        const tools = await raw.request('tools/list', {});
        assert.equal(tools.result.tools.length, TOOL_NAMES.length, `tools/list under ${version}`);
        const info = await raw.stop();
        assert.deepEqual(info, { code: 0, signal: null });
        raw.assertCleanStdout();
      } finally {
        await raw.stop();
      }
    }
  });

  it('malformed JSON gets -32700 and the server keeps serving', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      for (const bad of ['{"jsonrpc":"2.0","id":1,"method":', 'not json at all', '{"a":1}}', '\u0000\u0001']) {
        const before = raw.messages.length;
        raw.writeLine(bad);
        const reply = await raw.waitFor((m) => raw.messages.indexOf(m) >= before && m.error, 5000,
          `an error for ${JSON.stringify(bad)}`);
        assert.equal(reply.id, null);
        assert.equal(reply.error.code, -32700, `${JSON.stringify(bad)}: ${JSON.stringify(reply)}`);
        assert.equal(typeof reply.error.message, 'string');
        const ping = await raw.request('ping', {});
        assert.deepEqual(ping.result, {});
      }
      // Not a JSON-RPC request: -32600.
      const before = raw.messages.length;
      raw.writeLine('{"jsonrpc":"1.0","id":7,"method":"ping"}');
      const invalid = await raw.waitFor((m) => raw.messages.indexOf(m) >= before && m.error, 5000, 'an error');
      assert.equal(invalid.error.code, -32600);
      const tools = await raw.request('tools/list', {});
      assert.equal(tools.result.tools.length, TOOL_NAMES.length);
      raw.assertCleanStdout();
    } finally {
      await raw.stop();
    }
  });

  it('unknown methods get -32601, bad params -32602, unknown resources -32002', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      const unknown = await raw.request('no/such/method', {});
      assert.equal(unknown.error.code, -32601);
      const badTool = await raw.request('tools/call', { name: 'nope', arguments: {} });
      assert.equal(badTool.error.code, -32602);
      const noName = await raw.request('tools/call', { arguments: {} });
      assert.equal(noName.error.code, -32602);
      const prompt = await raw.request('prompts/get', { name: 'compress_conversation', arguments: {} });
      assert.equal(prompt.error.code, -32602);
      const resource = await raw.request('resources/read', { uri: 'conversation-history://missing' });
      assert.equal(resource.error.code, -32002);
      const noUri = await raw.request('resources/read', {});
      assert.equal(noUri.error.code, -32602);
      // A notification with an unknown method gets no reply at all.
      raw.send({ jsonrpc: '2.0', method: 'notifications/whatever' });
      const ping = await raw.request('ping');
      assert.deepEqual(ping.result, {});
      assert.equal(raw.messages.filter((m) => m.id === undefined || m.id === null).length, 0,
        `no unsolicited messages: ${JSON.stringify(raw.messages.filter((m) => m.id == null))}`);
      raw.assertCleanStdout();
    } finally {
      await raw.stop();
    }
  });

  it('a batch is answered by an array (2025-03-26)', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize('2025-03-26');
      raw.send([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 'b', method: 'no/such' },
      ]);
      const reply = await raw.waitFor((m) => Array.isArray(m), 5000, 'the batch reply');
      assert.equal(reply.length, 2);
      const byId = Object.fromEntries(reply.map((m) => [m.id, m]));
      assert.deepEqual(byId.a.result, {});
      assert.equal(byId.b.error.code, -32601);
    } finally {
      await raw.stop();
    }
  });

  it('notifications/cancelled stops a running call: no reply, then ping works', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      const id = raw.sendRequest('tools/call', {
        name: 'count_tokens',
        arguments: { input: manyMessages(200000), model: 'gpt-4o' },
        _meta: { progressToken: 'tok-1' },
      });
      const progress = await raw.waitFor(
        (m) => m.method === 'notifications/progress' && m.params?.progressToken === 'tok-1', 60000, 'progress');
      assert.equal(progress.params.total, 200000);
      raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
      const pingId = raw.sendRequest('ping');
      await raw.response(pingId, 60000);
      // Requests are served in order: a reply to the cancelled call would
      // have come before the ping's. Give stragglers a moment anyway.
      await sleep(300);
      const replies = raw.messages.filter((m) => m.id === id);
      assert.deepEqual(replies, [], 'no reply to the cancelled request');
      const pingIndex = raw.messages.findIndex((m) => m.id === pingId);
      const laterProgress = raw.messages.slice(pingIndex).filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(laterProgress, [], 'no progress after the cancelled call ended');
      // Cancelling an unknown or finished request is ignored.
      raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9999 } });
      const tools = await raw.request('tools/list', {});
      assert.equal(tools.result.tools.length, TOOL_NAMES.length);
      raw.assertCleanStdout();
    } finally {
      await raw.stop();
    }
  });

  it('progress notifications only with a progress token', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      const reply = await raw.request('tools/call', {
        name: 'count_tokens', arguments: { input: manyMessages(5000) },
      }, 60000);
      assert.equal(reply.result.structuredContent.success, true);
      assert.deepEqual(raw.messages.filter((m) => m.method === 'notifications/progress'), []);
    } finally {
      await raw.stop();
    }
  });

  it('EOF on stdin exits with code 0 after answering what was read', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    const id = raw.sendRequest('tools/list', {});
    // The last line has no newline: still a message.
    raw.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 'last', method: 'ping' }));
    raw.closeStdin();
    const info = await Promise.race([raw.exited, sleep(10000).then(() => 'timeout')]);
    assert.deepEqual(info, { code: 0, signal: null });
    assert.ok(raw.messages.find((m) => m.id === id)?.result, 'tools/list answered before exit');
    assert.ok(raw.messages.find((m) => m.id === 'last')?.result, 'the unterminated last line answered');
    raw.assertCleanStdout();
    await raw.stop();
    assert.equal(raw.rawStdout.endsWith('\n'), true);
  });

  it('SIGTERM during a long call exits promptly without a partial line', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      const id = raw.sendRequest('tools/call', {
        name: 'count_tokens',
        arguments: { input: manyMessages(200000), model: 'gpt-4o' },
        _meta: { progressToken: 7 },
      });
      await raw.waitFor((m) => m.method === 'notifications/progress', 60000, 'progress');
      const killedAt = Date.now();
      raw.kill('SIGTERM');
      const info = await Promise.race([raw.exited, sleep(5000).then(() => 'timeout')]);
      assert.notEqual(info, 'timeout', 'exited within 5 s of SIGTERM');
      assert.ok(Date.now() - killedAt < 5000);
      // The stdio server catches SIGTERM, cancels the work and returns.
      assert.deepEqual(info, { code: 0, signal: null });
      assert.equal(raw.messages.filter((m) => m.id === id).length, 0, 'the cancelled call got no reply');
      raw.assertCleanStdout();
    } finally {
      await raw.stop();
    }
  });

  it('SIGTERM when idle exits with code 0', async () => {
    const raw = new RawStdio();
    await raw.initialize();
    raw.kill('SIGTERM');
    const info = await Promise.race([raw.exited, sleep(5000).then(() => 'timeout')]);
    assert.deepEqual(info, { code: 0, signal: null });
    raw.assertCleanStdout();
    await raw.stop();
  });

  it('stdout carries only JSON-RPC lines over a whole session', async () => {
    const raw = new RawStdio();
    try {
      await raw.initialize();
      await raw.request('logging/setLevel', { level: 'debug' });
      const created = await raw.request('tools/call', {
        name: 'manage_conversation', arguments: { action: 'create', title: 'Wire check' },
      });
      const id = created.result.structuredContent.conversation.id;
      await raw.request('tools/call', {
        name: 'manage_conversation',
        arguments: { action: 'add_message', conversation_id: id, role: 'user', content: 'line\nbreaks\u2028and "quotes"' },
      });
      await raw.request('resources/read', { uri: `conversation-history://${id}` });
      await raw.request('prompts/get', { name: 'summarize_context', arguments: { conversation_id: id } });
      await raw.request('tools/call', {
        name: 'count_tokens', arguments: { input: manyMessages(3000) }, _meta: { progressToken: 'p' },
      });
      assert.ok(raw.messages.some((m) => m.method === 'notifications/message'), 'log messages were sent');
      await raw.stop();
      raw.assertCleanStdout();
      assert.ok(raw.messages.length >= 7);
      assert.ok(raw.stderr.length > 0, 'the human-readable line went to stderr');
    } finally {
      await raw.stop();
    }
  });
});
