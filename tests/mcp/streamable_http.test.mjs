// `ctxkit serve` at /mcp with the Streamable HTTP transport: the common
// suite through the SDK's StreamableHTTPClientTransport, then sessions:
// ids, isolation of negotiated state, one shared store, termination.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { PROTOCOL_VERSIONS, connectHttp, connectHttpClient, startServe, toolDoc } from './lib.mjs';
import { defineCommonSuite } from './scenarios.mjs';

defineCommonSuite(connectHttp);

describe('Streamable HTTP sessions', () => {
  let server;

  before(async () => {
    server = await startServe();
  });
  after(async () => {
    const info = await server?.stop();
    if (info) {
      assert.ok(info.code === 0 || info.code === 143 || info.signal === 'SIGTERM',
        `exit after SIGTERM: ${JSON.stringify(info)}`);
    }
  });

  it('each client gets its own session over one store', async () => {
    const a = await connectHttpClient(server.url);
    const b = await connectHttpClient(server.url);
    try {
      assert.equal(typeof a.transport.sessionId, 'string');
      assert.ok(a.transport.sessionId.length >= 16, 'an unguessable session id');
      assert.notEqual(a.transport.sessionId, b.transport.sessionId);
      const created = toolDoc(await a.client.callTool({
        name: 'manage_conversation', arguments: { action: 'create', title: 'Shared store' },
      }));
      const seen = toolDoc(await b.client.callTool({
        name: 'manage_conversation', arguments: { action: 'get', conversation_id: created.conversation.id },
      }));
      assert.equal(seen.conversation.title, 'Shared store');
      // Calls of two sessions at once.
      const calls = [];
      for (let i = 0; i < 10; i++) {
        const c = i % 2 === 0 ? a.client : b.client;
        calls.push(c.callTool({ name: 'count_tokens', arguments: { input: `parallel call ${i}` } }));
      }
      for (const result of await Promise.all(calls)) assert.equal(toolDoc(result).success, true);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('requests without a session, or with a terminated one, are refused', async () => {
    const { client, transport } = await connectHttpClient(server.url);
    const sessionId = transport.sessionId;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

    const ok = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body });
    assert.equal(ok.status, 200);
    const text = await ok.text();
    assert.ok(text.includes('"result"'), text);

    const none = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body });
    assert.equal(none.status, 400, 'a non-initialize request without Mcp-Session-Id');
    await none.text();

    const unknown = await fetch(`${server.url}/mcp`, {
      method: 'POST', headers: { ...headers, 'mcp-session-id': 'no-such-session' }, body,
    });
    assert.equal(unknown.status, 404, 'an unknown session id');
    await unknown.text();

    await transport.terminateSession();
    assert.equal(transport.sessionId, undefined);
    const gone = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body });
    assert.equal(gone.status, 404, 'a terminated session');
    await gone.text();
    await client.close();
  });

  it('initialize answers each served revision with itself, others with 2025-11-25', async () => {
    for (const version of [...PROTOCOL_VERSIONS, '2023-01-01']) {
      const response = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0', id: 1, method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      assert.equal(response.status, 200, version);
      const sessionId = response.headers.get('mcp-session-id');
      assert.ok(sessionId, 'a session id');
      const text = await response.text();
      // A JSON body, or one SSE event carrying it.
      const json = response.headers.get('content-type').startsWith('text/event-stream')
        ? JSON.parse(text.split('\n').find((l) => l.startsWith('data:')).slice(5))
        : JSON.parse(text);
      const expected = PROTOCOL_VERSIONS.includes(version) ? version : '2025-11-25';
      assert.equal(json.result.protocolVersion, expected, `client asked ${version}`);
      const closed = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
      assert.ok(closed.status === 200 || closed.status === 204, `DELETE: ${closed.status}`);
      await closed.text();
    }
  });

  it('a notification is accepted with 202 and no body', async () => {
    const { client, transport } = await connectHttpClient(server.url);
    try {
      const response = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      assert.equal(response.status, 202);
      assert.equal(await response.text(), '');
    } finally {
      await client.close();
    }
  });
});
